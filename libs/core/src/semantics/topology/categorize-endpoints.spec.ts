import type { Endpoint } from '../model/endpoint.js';
import type { ServicePort } from '../model/service-port.js';
import { servicePortName } from '../model/service-port-name.js';
import { categorizeEndpoints } from './categorize-endpoints.js';
import { DEFAULT_TOPOLOGY_GATES, topologyGates } from './topology-gates.js';

const ZONE = 'topology.kubernetes.io/zone';
const NODE = 'node-1';

interface EndpointOpts {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  isLocal?: boolean;
  zoneHints?: string[];
  nodeHints?: string[];
}

/** Like upstream's BaseEndpointInfo literals: every condition false unless given. */
function ep(key: string, o: EndpointOpts = {}): Endpoint {
  const [ip, port] = key.split(':');
  return {
    ip: ip!,
    port: Number(port),
    key,
    ready: o.ready ?? false,
    serving: o.serving ?? false,
    terminating: o.terminating ?? false,
    isLocal: o.isLocal ?? false,
    nodeName: o.isLocal ? NODE : '',
    zone: '',
    zoneHints: o.zoneHints ? new Set(o.zoneHints) : null,
    nodeHints: o.nodeHints ? new Set(o.nodeHints) : null,
  };
}

interface PortOpts {
  internalPolicyLocal?: boolean;
  externalPolicyLocal?: boolean;
  nodePort?: number;
}

/** A ServicePort with upstream's derived booleans, like BaseServicePortInfo literals in the Go tests. */
function svc(o: PortOpts = {}): ServicePort {
  const internalPolicyLocal = o.internalPolicyLocal ?? false;
  const externalPolicyLocal = o.externalPolicyLocal ?? false;
  const nodePort = o.nodePort ?? 0;
  const externallyAccessible = nodePort !== 0;
  return {
    name: servicePortName('ns', 'svc', '', 'TCP'),
    family: 'IPv4',
    clusterIP: '172.30.0.1',
    port: 80,
    protocol: 'TCP',
    nodePort,
    externalIPs: [],
    loadBalancerVIPs: [],
    loadBalancerSourceRanges: [],
    sessionAffinityClientIP: false,
    stickyMaxAgeSeconds: 0,
    externalPolicyLocal,
    internalPolicyLocal,
    healthCheckNodePort: 0,
    trafficDistribution: '',
    hintsAnnotation: '',
    externallyAccessible,
    usesClusterEndpoints: !internalPolicyLocal || externallyAccessible,
    usesLocalEndpoints: internalPolicyLocal || (externalPolicyLocal && externallyAccessible),
  };
}

interface Case {
  name: string;
  nodeLabels?: Record<string, string>;
  serviceInfo: ServicePort;
  endpoints: Endpoint[];
  /** null: the service does not use this kind of endpoints; []: it does but has none. */
  clusterEndpoints: string[] | null;
  localEndpoints: string[] | null;
  /** Only needed when both kinds are used. */
  allEndpoints?: string[];
  /** hasAnyEndpoints is true although allEndpoints is empty. */
  onlyRemoteEndpoints?: boolean;
  /** --feature-gates=PreferSameTrafficDistribution=…; default on (the gate's default). */
  preferSame?: boolean;
}

const zoneA = { [ZONE]: 'zone-a' };

// Ported from upstream pkg/proxy/topology_test.go (TestCategorizeEndpoints), plus node-hint cases.
const cases: Case[] = [
  {
    name: 'should use topology since all endpoints have hints, node has a zone label and there are endpoints for the zone',
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [
      ep('10.1.2.3:80', { zoneHints: ['zone-a'], ready: true }),
      ep('10.1.2.4:80', { zoneHints: ['zone-b'], ready: true }),
      ep('10.1.2.5:80', { zoneHints: ['zone-c'], ready: true }),
      ep('10.1.2.6:80', { zoneHints: ['zone-a'], ready: true }),
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.6:80'],
    localEndpoints: null,
  },
  {
    name: 'externalTrafficPolicy: Local, topology ignored for Local endpoints',
    nodeLabels: zoneA,
    serviceInfo: svc({ externalPolicyLocal: true, nodePort: 8080 }),
    endpoints: [
      ep('10.1.2.3:80', { zoneHints: ['zone-a'], ready: true, isLocal: true }),
      ep('10.1.2.4:80', { zoneHints: ['zone-b'], ready: true, isLocal: true }),
      ep('10.1.2.5:80', { zoneHints: ['zone-c'], ready: true }),
      ep('10.1.2.6:80', { zoneHints: ['zone-a'], ready: true }),
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.6:80'],
    localEndpoints: ['10.1.2.3:80', '10.1.2.4:80'],
    allEndpoints: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
  },
  {
    name: 'internalTrafficPolicy: Local, topology ignored for Local endpoints',
    nodeLabels: zoneA,
    serviceInfo: svc({ internalPolicyLocal: true, externalPolicyLocal: false, nodePort: 8080 }),
    endpoints: [
      ep('10.1.2.3:80', { zoneHints: ['zone-a'], ready: true, isLocal: true }),
      ep('10.1.2.4:80', { zoneHints: ['zone-b'], ready: true, isLocal: true }),
      ep('10.1.2.5:80', { zoneHints: ['zone-c'], ready: true }),
      ep('10.1.2.6:80', { zoneHints: ['zone-a'], ready: true }),
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.6:80'],
    localEndpoints: ['10.1.2.3:80', '10.1.2.4:80'],
    allEndpoints: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
  },
  {
    name: 'empty node labels',
    nodeLabels: {},
    serviceInfo: svc(),
    endpoints: [ep('10.1.2.3:80', { zoneHints: ['zone-a'], ready: true })],
    clusterEndpoints: ['10.1.2.3:80'],
    localEndpoints: null,
  },
  {
    name: 'empty zone label',
    nodeLabels: { [ZONE]: '' },
    serviceInfo: svc(),
    endpoints: [ep('10.1.2.3:80', { zoneHints: ['zone-a'], ready: true })],
    clusterEndpoints: ['10.1.2.3:80'],
    localEndpoints: null,
  },
  {
    name: 'node in different zone, no endpoint filtering',
    nodeLabels: { [ZONE]: 'zone-b' },
    serviceInfo: svc(),
    endpoints: [ep('10.1.2.3:80', { zoneHints: ['zone-a'], ready: true })],
    clusterEndpoints: ['10.1.2.3:80'],
    localEndpoints: null,
  },
  {
    name: 'unready endpoint',
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [
      ep('10.1.2.3:80', { zoneHints: ['zone-a'], ready: true }),
      ep('10.1.2.4:80', { zoneHints: ['zone-b'], ready: true }),
      ep('10.1.2.5:80', { zoneHints: ['zone-c'], ready: true }),
      ep('10.1.2.6:80', { zoneHints: ['zone-a'], ready: false }),
    ],
    clusterEndpoints: ['10.1.2.3:80'],
    localEndpoints: null,
  },
  {
    name: 'only unready endpoints in same zone (should not filter)',
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [
      ep('10.1.2.3:80', { zoneHints: ['zone-a'], ready: false }),
      ep('10.1.2.4:80', { zoneHints: ['zone-b'], ready: true }),
      ep('10.1.2.5:80', { zoneHints: ['zone-c'], ready: true }),
      ep('10.1.2.6:80', { zoneHints: ['zone-a'], ready: false }),
    ],
    clusterEndpoints: ['10.1.2.4:80', '10.1.2.5:80'],
    localEndpoints: null,
  },
  {
    name: 'missing hints, no filtering applied',
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [
      ep('10.1.2.3:80', { zoneHints: ['zone-a'], ready: true }),
      ep('10.1.2.4:80', { zoneHints: ['zone-b'], ready: true }),
      ep('10.1.2.5:80', { ready: true }),
      ep('10.1.2.6:80', { zoneHints: ['zone-a'], ready: true }),
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.5:80', '10.1.2.6:80'],
    localEndpoints: null,
  },
  {
    name: 'multiple hints per endpoint, filtering includes any endpoint with zone included',
    nodeLabels: { [ZONE]: 'zone-c' },
    serviceInfo: svc(),
    endpoints: [
      ep('10.1.2.3:80', { zoneHints: ['zone-a', 'zone-b', 'zone-c'], ready: true }),
      ep('10.1.2.4:80', { zoneHints: ['zone-b', 'zone-c'], ready: true }),
      ep('10.1.2.5:80', { zoneHints: ['zone-b', 'zone-d'], ready: true }),
      ep('10.1.2.6:80', { zoneHints: ['zone-c'], ready: true }),
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
    localEndpoints: null,
  },
  {
    name: 'conflicting topology and localness require merging allEndpoints',
    nodeLabels: zoneA,
    serviceInfo: svc({ internalPolicyLocal: false, externalPolicyLocal: true, nodePort: 8080 }),
    endpoints: [
      ep('10.0.0.0:80', { zoneHints: ['zone-a'], ready: true, isLocal: true }),
      ep('10.0.0.1:80', { zoneHints: ['zone-b'], ready: true, isLocal: true }),
      ep('10.0.0.2:80', { zoneHints: ['zone-a'], ready: true, isLocal: false }),
      ep('10.0.0.3:80', { zoneHints: ['zone-b'], ready: true, isLocal: false }),
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.2:80'],
    localEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80', '10.0.0.2:80'],
  },
  {
    name: 'internalTrafficPolicy: Local, with empty endpoints',
    serviceInfo: svc({ internalPolicyLocal: true }),
    endpoints: [],
    clusterEndpoints: null,
    localEndpoints: [],
  },
  {
    name: 'internalTrafficPolicy: Local, but all endpoints are remote',
    serviceInfo: svc({ internalPolicyLocal: true }),
    endpoints: [ep('10.0.0.0:80', { ready: true }), ep('10.0.0.1:80', { ready: true })],
    clusterEndpoints: null,
    localEndpoints: [],
    onlyRemoteEndpoints: true,
  },
  {
    name: 'internalTrafficPolicy: Local, all endpoints are local',
    serviceInfo: svc({ internalPolicyLocal: true }),
    endpoints: [ep('10.0.0.0:80', { ready: true, isLocal: true }), ep('10.0.0.1:80', { ready: true, isLocal: true })],
    clusterEndpoints: null,
    localEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'internalTrafficPolicy: Local, some endpoints are local',
    serviceInfo: svc({ internalPolicyLocal: true }),
    endpoints: [ep('10.0.0.0:80', { ready: true, isLocal: true }), ep('10.0.0.1:80', { ready: true })],
    clusterEndpoints: null,
    localEndpoints: ['10.0.0.0:80'],
  },
  {
    name: 'Cluster traffic policy, endpoints not Ready',
    serviceInfo: svc(),
    endpoints: [ep('10.0.0.0:80'), ep('10.0.0.1:80')],
    clusterEndpoints: [],
    localEndpoints: null,
  },
  {
    name: 'Cluster traffic policy, some endpoints are Ready',
    serviceInfo: svc(),
    endpoints: [ep('10.0.0.0:80'), ep('10.0.0.1:80', { ready: true })],
    clusterEndpoints: ['10.0.0.1:80'],
    localEndpoints: null,
  },
  {
    name: 'Cluster traffic policy, all endpoints are terminating',
    serviceInfo: svc(),
    endpoints: [
      ep('10.0.0.0:80', { serving: true, terminating: true, isLocal: true }),
      ep('10.0.0.1:80', { serving: true, terminating: true }),
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: null,
  },
  {
    name: 'iTP: Local, eTP: Cluster, some endpoints local',
    serviceInfo: svc({ internalPolicyLocal: true, externalPolicyLocal: false, nodePort: 8080 }),
    endpoints: [ep('10.0.0.0:80', { ready: true, isLocal: true }), ep('10.0.0.1:80', { ready: true })],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: ['10.0.0.0:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Cluster, eTP: Local, some endpoints local',
    serviceInfo: svc({ internalPolicyLocal: false, externalPolicyLocal: true, nodePort: 8080 }),
    endpoints: [ep('10.0.0.0:80', { ready: true, isLocal: true }), ep('10.0.0.1:80', { ready: true })],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: ['10.0.0.0:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Local, eTP: Local, some endpoints local',
    serviceInfo: svc({ internalPolicyLocal: true, externalPolicyLocal: true, nodePort: 8080 }),
    endpoints: [ep('10.0.0.0:80', { ready: true, isLocal: true }), ep('10.0.0.1:80', { ready: true })],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: ['10.0.0.0:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Local, eTP: Local, all endpoints remote',
    serviceInfo: svc({ internalPolicyLocal: true, externalPolicyLocal: true, nodePort: 8080 }),
    endpoints: [ep('10.0.0.0:80', { ready: true }), ep('10.0.0.1:80', { ready: true })],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: [],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Local, eTP: Local, all endpoints remote and terminating',
    serviceInfo: svc({ internalPolicyLocal: true, externalPolicyLocal: true, nodePort: 8080 }),
    endpoints: [
      ep('10.0.0.0:80', { serving: true, terminating: true }),
      ep('10.0.0.1:80', { serving: true, terminating: true }),
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: [],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    onlyRemoteEndpoints: true,
  },
  {
    name: 'iTP: Cluster, eTP: Local, with terminating endpoints',
    serviceInfo: svc({ internalPolicyLocal: false, externalPolicyLocal: true, nodePort: 8080 }),
    endpoints: [
      ep('10.0.0.0:80', { ready: true }),
      ep('10.0.0.1:80', { serving: false, isLocal: true }),
      ep('10.0.0.2:80', { serving: true, terminating: true, isLocal: true }),
      ep('10.0.0.3:80', { serving: true, terminating: true }),
    ],
    clusterEndpoints: ['10.0.0.0:80'],
    localEndpoints: ['10.0.0.2:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.2:80'],
  },
  {
    name: 'externalTrafficPolicy ignored if not externally accessible',
    serviceInfo: svc({ externalPolicyLocal: true }),
    endpoints: [ep('10.0.0.0:80', { ready: true }), ep('10.0.0.1:80', { ready: true, isLocal: true })],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: null,
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'no cluster endpoints for iTP:Local internal-only service',
    serviceInfo: svc({ internalPolicyLocal: true }),
    endpoints: [ep('10.0.0.0:80', { ready: true }), ep('10.0.0.1:80', { ready: true, isLocal: true })],
    clusterEndpoints: null,
    localEndpoints: ['10.0.0.1:80'],
    allEndpoints: ['10.0.0.1:80'],
  },
  // Node hints (PreferSameNode), as upstream's topologyModeFromHints handles them.
  {
    name: 'node hints for this node win over zone hints',
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [
      ep('10.0.0.1:80', { ready: true, zoneHints: ['zone-a'], nodeHints: [NODE] }),
      ep('10.0.0.2:80', { ready: true, zoneHints: ['zone-a'], nodeHints: ['node-2'] }),
      ep('10.0.0.3:80', { ready: true, zoneHints: ['zone-b'], nodeHints: ['node-3'] }),
    ],
    clusterEndpoints: ['10.0.0.1:80'],
    localEndpoints: null,
  },
  {
    name: 'no node hint for this node falls back to zone hints',
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [
      ep('10.0.0.2:80', { ready: true, zoneHints: ['zone-a'], nodeHints: ['node-2'] }),
      ep('10.0.0.3:80', { ready: true, zoneHints: ['zone-b'], nodeHints: ['node-3'] }),
    ],
    clusterEndpoints: ['10.0.0.2:80'],
    localEndpoints: null,
  },
  {
    name: 'one ready endpoint without a node hint disables node topology',
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [
      ep('10.0.0.1:80', { ready: true, zoneHints: ['zone-a'], nodeHints: [NODE] }),
      ep('10.0.0.2:80', { ready: true, zoneHints: ['zone-a'] }),
      ep('10.0.0.3:80', { ready: true, zoneHints: ['zone-b'], nodeHints: ['node-3'] }),
    ],
    clusterEndpoints: ['10.0.0.1:80', '10.0.0.2:80'],
    localEndpoints: null,
  },
  {
    name: 'a node hint on an unready endpoint does not count',
    nodeLabels: {},
    serviceInfo: svc(),
    endpoints: [
      ep('10.0.0.1:80', { ready: false, nodeHints: [NODE] }),
      ep('10.0.0.2:80', { ready: true, nodeHints: ['node-2'] }),
    ],
    clusterEndpoints: ['10.0.0.2:80'],
    localEndpoints: null,
  },
  {
    name: 'node hints without zone hints still apply',
    nodeLabels: {},
    serviceInfo: svc(),
    endpoints: [ep('10.0.0.1:80', { ready: true, nodeHints: [NODE] }), ep('10.0.0.2:80', { ready: true, nodeHints: ['node-2'] })],
    clusterEndpoints: ['10.0.0.1:80'],
    localEndpoints: null,
  },
  // PreferSameTrafficDistribution=false: upstream only looks at node hints while the gate is on.
  {
    name: 'gate off: node hints for this node are ignored and zone hints decide',
    preferSame: false,
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [
      ep('10.0.0.1:80', { ready: true, zoneHints: ['zone-a'], nodeHints: [NODE] }),
      ep('10.0.0.2:80', { ready: true, zoneHints: ['zone-a'], nodeHints: ['node-2'] }),
      ep('10.0.0.3:80', { ready: true, zoneHints: ['zone-b'], nodeHints: ['node-3'] }),
    ],
    clusterEndpoints: ['10.0.0.1:80', '10.0.0.2:80'],
    localEndpoints: null,
  },
  {
    name: 'gate off: trafficDistribution PreferSameNode falls back to the zone hints',
    preferSame: false,
    nodeLabels: zoneA,
    serviceInfo: { ...svc(), trafficDistribution: 'PreferSameNode' },
    endpoints: [
      ep('10.0.0.1:80', { ready: true, zoneHints: ['zone-a'], nodeHints: [NODE] }),
      ep('10.0.0.2:80', { ready: true, zoneHints: ['zone-a'], nodeHints: ['node-2'] }),
      ep('10.0.0.3:80', { ready: true, zoneHints: ['zone-b'], nodeHints: ['node-3'] }),
    ],
    clusterEndpoints: ['10.0.0.1:80', '10.0.0.2:80'],
    localEndpoints: null,
  },
  {
    name: 'gate off: node hints without zone hints mean no topology (every ready endpoint)',
    preferSame: false,
    nodeLabels: {},
    serviceInfo: svc(),
    endpoints: [ep('10.0.0.1:80', { ready: true, nodeHints: [NODE] }), ep('10.0.0.2:80', { ready: true, nodeHints: ['node-2'] })],
    clusterEndpoints: ['10.0.0.1:80', '10.0.0.2:80'],
    localEndpoints: null,
  },
  {
    name: 'gate off: zone hints still narrow to this zone',
    preferSame: false,
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [ep('10.0.0.1:80', { ready: true, zoneHints: ['zone-a'] }), ep('10.0.0.2:80', { ready: true, zoneHints: ['zone-b'] })],
    clusterEndpoints: ['10.0.0.1:80'],
    localEndpoints: null,
  },
  {
    name: 'gate off, Local internal policy with a NodePort: local endpoints are untouched by the gate',
    preferSame: false,
    nodeLabels: zoneA,
    serviceInfo: svc({ internalPolicyLocal: true, nodePort: 30000 }),
    endpoints: [
      ep('10.0.0.1:80', { ready: true, isLocal: true, zoneHints: ['zone-a'], nodeHints: [NODE] }),
      ep('10.0.0.2:80', { ready: true, zoneHints: ['zone-a'], nodeHints: ['node-2'] }),
    ],
    clusterEndpoints: ['10.0.0.1:80', '10.0.0.2:80'],
    localEndpoints: ['10.0.0.1:80'],
    allEndpoints: ['10.0.0.1:80', '10.0.0.2:80'],
  },
  {
    name: 'topology hints are ignored when falling back to terminating endpoints',
    nodeLabels: zoneA,
    serviceInfo: svc(),
    endpoints: [
      ep('10.0.0.1:80', { serving: true, terminating: true, zoneHints: ['zone-a'] }),
      ep('10.0.0.2:80', { serving: true, terminating: true, zoneHints: ['zone-b'] }),
      ep('10.0.0.3:80', { serving: false, terminating: true, zoneHints: ['zone-a'] }),
    ],
    clusterEndpoints: ['10.0.0.1:80', '10.0.0.2:80'],
    localEndpoints: null,
  },
];

const sortedKeys = (eps: readonly Endpoint[] | null) => (eps === null ? null : eps.map((e) => e.key).sort());

describe('categorizeEndpoints', () => {
  it.each(cases)('$name', (tc) => {
    const gates = tc.preferSame === undefined ? undefined : { preferSameTrafficDistribution: tc.preferSame };
    const result = categorizeEndpoints(tc.endpoints, tc.serviceInfo, NODE, tc.nodeLabels ?? {}, gates);

    expect(sortedKeys(result.clusterEndpoints)).toEqual(tc.clusterEndpoints === null ? null : [...tc.clusterEndpoints].sort());
    expect(sortedKeys(result.localEndpoints)).toEqual(tc.localEndpoints === null ? null : [...tc.localEndpoints].sort());

    let expectedAll: string[];
    if (tc.clusterEndpoints !== null && tc.localEndpoints === null) expectedAll = tc.clusterEndpoints;
    else if (tc.localEndpoints !== null && tc.clusterEndpoints === null) expectedAll = tc.localEndpoints;
    else expectedAll = tc.allEndpoints ?? [];
    expect(sortedKeys(result.allReachableEndpoints)).toEqual([...expectedAll].sort());

    expect(result.hasAnyEndpoints).toBe(expectedAll.length > 0 || (tc.onlyRemoteEndpoints ?? false));
  });

  it('does not duplicate endpoints in the merged list', () => {
    const result = categorizeEndpoints(
      [
        ep('10.0.0.0:80', { zoneHints: ['zone-a'], ready: true, isLocal: true }),
        ep('10.0.0.1:80', { zoneHints: ['zone-b'], ready: true, isLocal: true }),
      ],
      svc({ externalPolicyLocal: true, nodePort: 30000 }),
      NODE,
      zoneA,
    );
    expect(result.allReachableEndpoints.map((e) => e.key)).toEqual(['10.0.0.0:80', '10.0.0.1:80']);
  });
});

describe('topologyGates', () => {
  it('reads PreferSameTrafficDistribution from the configured feature gates (default on)', () => {
    expect(topologyGates({})).toEqual({ preferSameTrafficDistribution: true });
    expect(DEFAULT_TOPOLOGY_GATES).toEqual(topologyGates({}));
    expect(topologyGates({ PreferSameTrafficDistribution: false })).toEqual({ preferSameTrafficDistribution: false });
    // GA since v1.35: AllBeta no longer reaches it (validation refuses turning it off from the CLI).
    expect(topologyGates({ AllBeta: false })).toEqual({ preferSameTrafficDistribution: true });
    expect(topologyGates({ AllBeta: false, PreferSameTrafficDistribution: true })).toEqual({ preferSameTrafficDistribution: true });
  });
});
