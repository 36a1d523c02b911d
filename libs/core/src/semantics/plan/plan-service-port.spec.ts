import type { V1LoadBalancerIngress, V1Service, V1ServiceSpec } from '@kubernetes/client-node';
import type { Endpoint } from '../model/endpoint.js';
import { servicePortsFromService } from '../model/service-port-from-service.js';
import { nullLogger } from '../../host/logger.js';
import { endpointSetOf, planServicePort, type ServicePlanContext } from './plan-service-port.js';
import type { ServicePortPlan } from './service-port-plan.js';

const NODE = 'node-1';

/** An endpoint of this node (`local`) or another, ready unless said otherwise. */
function ep(ip: string, o: { local?: boolean; ready?: boolean; serving?: boolean; terminating?: boolean } = {}): Endpoint {
  const ready = o.ready ?? true;
  return {
    ip,
    port: 8080,
    key: `${ip}:8080`,
    ready,
    serving: o.serving ?? ready,
    terminating: o.terminating ?? false,
    isLocal: o.local ?? false,
    nodeName: o.local ? NODE : 'node-2',
    zone: '',
    zoneHints: null,
    nodeHints: null,
  };
}

function service(spec: Partial<V1ServiceSpec>, ingress?: V1LoadBalancerIngress[]): V1Service {
  return {
    metadata: { namespace: 'ns1', name: 'svc1' },
    spec: {
      type: 'ClusterIP',
      clusterIP: '172.30.0.41',
      clusterIPs: ['172.30.0.41'],
      ipFamilies: ['IPv4'],
      ports: [{ name: 'p80', port: 80, protocol: 'TCP', ...(spec.type === 'NodePort' || spec.type === 'LoadBalancer' ? { nodePort: 30080 } : {}) }],
      ...spec,
    },
    status: ingress ? { loadBalancer: { ingress } } : undefined,
  };
}

const CONTEXT: ServicePlanContext = {
  nodeName: NODE,
  nodeLabels: {},
  masqueradeAll: false,
  localDetection: true,
  nodeIP: '10.0.0.5',
};

function plan(svc: V1Service, endpoints: readonly Endpoint[], ctx: Partial<ServicePlanContext> = {}): ServicePortPlan {
  const [port] = servicePortsFromService(svc, 'IPv4', nullLogger);
  if (port === undefined) throw new Error('service has no IPv4 port');
  return planServicePort(port, endpoints, { ...CONTEXT, ...ctx });
}

const REMOTE = [ep('10.180.0.1'), ep('10.180.0.2')];
const MIXED = [ep('10.180.0.1'), ep('10.180.0.2', { local: true })];
const LB_SPEC: Partial<V1ServiceSpec> = { type: 'LoadBalancer' };

interface Case {
  name: string;
  svc: V1Service;
  endpoints: readonly Endpoint[];
  ctx?: Partial<ServicePlanContext>;
  expect: Partial<Record<keyof ServicePortPlan, unknown>>;
}

const cases: Case[] = [
  {
    name: 'ClusterIP with endpoints: internal traffic reaches the cluster set, masqueraded only from off-cluster',
    svc: service({}),
    endpoints: REMOTE,
    expect: {
      clusterIP: '172.30.0.41',
      hasEndpoints: true,
      internalEndpoints: 'cluster',
      internalReachable: true,
      internalVerdict: null,
      internalMasquerade: 'off-cluster',
      externalMasquerade: 'none',
      nodePort: 0,
      firewalled: false,
      balancesClusterEndpoints: true,
      balancesLocalEndpoints: false,
      masqueradeHairpin: true,
      healthCheckNodePort: 0,
    },
  },
  {
    name: 'ClusterIP without a local-traffic detector: no cluster IP masquerade at all',
    svc: service({}),
    endpoints: REMOTE,
    ctx: { localDetection: false },
    expect: { internalMasquerade: 'none' },
  },
  {
    name: 'masqueradeAll masquerades all cluster IP traffic, detector or not',
    svc: service({}),
    endpoints: REMOTE,
    ctx: { masqueradeAll: true, localDetection: false },
    expect: { internalMasquerade: 'all' },
  },
  {
    name: 'no endpoints: both classes rejected, nothing accepted externally, no masquerade',
    svc: service({ type: 'NodePort' }),
    endpoints: [],
    expect: {
      hasEndpoints: false,
      internalReachable: false,
      internalVerdict: 'reject',
      internalMasquerade: 'none',
      externalAccepted: false,
      externalReachable: false,
      externalVerdict: 'reject',
      externalMasquerade: 'none',
      reachableEndpoints: [],
    },
  },
  {
    name: 'only not-ready endpoints count as none: rejected',
    svc: service({}),
    endpoints: [ep('10.180.0.1', { ready: false, serving: false })],
    expect: { hasEndpoints: false, internalVerdict: 'reject' },
  },
  {
    name: 'terminating-only (serving) endpoints are used as a fallback',
    svc: service({}),
    endpoints: [ep('10.180.0.1', { ready: false, serving: true, terminating: true })],
    expect: { hasEndpoints: true, internalReachable: true, internalVerdict: null, balancesClusterEndpoints: true },
  },
  {
    name: 'NodePort with Cluster policy: external traffic all masqueraded to the cluster set',
    svc: service({ type: 'NodePort' }),
    endpoints: REMOTE,
    expect: {
      nodePort: 30080,
      externalAccepted: true,
      externalEndpoints: 'cluster',
      externalReachable: true,
      externalVerdict: null,
      externalMasquerade: 'all',
      podsBypassExternalPolicy: false,
    },
  },
  {
    name: 'eTP Local with a local endpoint: client address kept, node and pod traffic short-circuited',
    svc: service({ type: 'NodePort', externalTrafficPolicy: 'Local' }),
    endpoints: MIXED,
    expect: {
      externalEndpoints: 'local',
      externalReachable: true,
      externalMasquerade: 'local-sources',
      podsBypassExternalPolicy: true,
      balancesClusterEndpoints: true,
      balancesLocalEndpoints: true,
    },
  },
  {
    name: 'eTP Local without a detector: only the node’s own traffic is short-circuited',
    svc: service({ type: 'NodePort', externalTrafficPolicy: 'Local' }),
    endpoints: MIXED,
    ctx: { localDetection: false },
    expect: { externalMasquerade: 'local-sources', podsBypassExternalPolicy: false },
  },
  {
    name: 'eTP Local with no local endpoint: external traffic dropped, internal still served',
    svc: service({ type: 'NodePort', externalTrafficPolicy: 'Local' }),
    endpoints: REMOTE,
    expect: {
      externalAccepted: true,
      externalReachable: false,
      externalVerdict: 'drop',
      externalMasquerade: 'local-sources',
      internalReachable: true,
      internalVerdict: null,
      balancesLocalEndpoints: false,
    },
  },
  {
    name: 'iTP Local with no local endpoint: cluster IP traffic dropped, not rejected, and not masqueraded',
    svc: service({ internalTrafficPolicy: 'Local' }),
    endpoints: REMOTE,
    expect: { internalEndpoints: 'local', internalReachable: false, internalVerdict: 'drop', internalMasquerade: 'none' },
  },
  {
    name: 'iTP Local with a local endpoint: cluster IP traffic reaches only the local set',
    svc: service({ internalTrafficPolicy: 'Local' }),
    endpoints: MIXED,
    expect: { internalEndpoints: 'local', internalReachable: true, balancesLocalEndpoints: true, balancesClusterEndpoints: false },
  },
  {
    name: 'externalIPs are external addresses, served with Cluster policy',
    svc: service({ externalIPs: ['192.168.99.11'] }),
    endpoints: REMOTE,
    expect: { externalIPs: ['192.168.99.11'], externalAccepted: true, externalMasquerade: 'all' },
  },
  {
    name: 'LB ingress with ipMode VIP (or unset) is answered on this node',
    svc: service(LB_SPEC, [{ ip: '1.2.3.4', ipMode: 'VIP' }, { ip: '1.2.3.5' }]),
    endpoints: REMOTE,
    expect: { loadBalancerIPs: ['1.2.3.4', '1.2.3.5'], firewalled: false },
  },
  {
    name: 'LB ingress with ipMode Proxy is left to the load balancer',
    svc: service(LB_SPEC, [{ ip: '1.2.3.4', ipMode: 'Proxy' }]),
    endpoints: REMOTE,
    expect: { loadBalancerIPs: [] },
  },
  {
    name: 'source ranges firewall the LB IPs; the node outside them gets no exception',
    svc: service({ ...LB_SPEC, loadBalancerSourceRanges: ['203.0.113.0/25'] }, [{ ip: '1.2.3.4' }]),
    endpoints: REMOTE,
    expect: { firewalled: true, firewallSourceRanges: ['203.0.113.0/25'], firewallAllowsLoadBalancerIPs: false },
  },
  {
    name: 'source ranges that contain the node IP also allow the LB IPs as sources',
    svc: service({ ...LB_SPEC, loadBalancerSourceRanges: ['203.0.113.0/25', '10.0.0.0/8'] }, [{ ip: '1.2.3.4' }]),
    endpoints: REMOTE,
    expect: { firewalled: true, firewallAllowsLoadBalancerIPs: true },
  },
  {
    name: 'an unknown node IP never earns the LB-source exception',
    svc: service({ ...LB_SPEC, loadBalancerSourceRanges: ['10.0.0.0/8'] }, [{ ip: '1.2.3.4' }]),
    endpoints: REMOTE,
    ctx: { nodeIP: null },
    expect: { firewalled: true, firewallAllowsLoadBalancerIPs: false },
  },
  {
    name: 'source ranges without endpoints: no firewall, the LB IPs get the reject verdict',
    svc: service({ ...LB_SPEC, loadBalancerSourceRanges: ['10.0.0.0/8'] }, [{ ip: '1.2.3.4' }]),
    endpoints: [],
    expect: { firewalled: false, firewallSourceRanges: [], externalVerdict: 'reject', loadBalancerIPs: ['1.2.3.4'] },
  },
  {
    name: 'source ranges without LB IPs firewall nothing',
    svc: service({ ...LB_SPEC, loadBalancerSourceRanges: ['10.0.0.0/8'] }),
    endpoints: REMOTE,
    expect: { firewalled: false, firewallSourceRanges: [] },
  },
  {
    name: 'eTP Local LoadBalancer carries its health-check node port',
    svc: service({ ...LB_SPEC, externalTrafficPolicy: 'Local', healthCheckNodePort: 30000 }, [{ ip: '1.2.3.4' }]),
    endpoints: MIXED,
    expect: { healthCheckNodePort: 30000, externalEndpoints: 'local' },
  },
  {
    name: 'ClientIP affinity: on, with the configured timeout',
    svc: service({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 300 } } }),
    endpoints: REMOTE,
    expect: { sessionAffinity: true, affinitySeconds: 300 },
  },
  {
    name: 'no affinity: off, timeout 0',
    svc: service({}),
    endpoints: REMOTE,
    expect: { sessionAffinity: false, affinitySeconds: 0 },
  },
];

describe('planServicePort', () => {
  it.each(cases)('$name', ({ svc, endpoints, ctx, expect: expected }) => {
    const p = plan(svc, endpoints, ctx);
    for (const [field, value] of Object.entries(expected)) {
      expect({ field, value: p[field as keyof ServicePortPlan] }).toEqual({ field, value });
    }
  });

  it('lists every endpoint some class may reach once, in EndpointsMap order', () => {
    const p = plan(service({ type: 'NodePort', externalTrafficPolicy: 'Local' }), MIXED);
    expect(p.reachableEndpoints.map((e) => e.key)).toEqual(['10.180.0.1:8080', '10.180.0.2:8080']);
    expect(p.localEndpoints.map((e) => e.key)).toEqual(['10.180.0.2:8080']);
    expect(p.clusterEndpoints.map((e) => e.key)).toEqual(['10.180.0.1:8080', '10.180.0.2:8080']);
  });

  it('endpointSetOf gives each class the set its policy names', () => {
    const p = plan(service({ type: 'NodePort', externalTrafficPolicy: 'Local' }), MIXED);
    expect(endpointSetOf(p, p.internalEndpoints).map((e) => e.key)).toEqual(['10.180.0.1:8080', '10.180.0.2:8080']);
    expect(endpointSetOf(p, p.externalEndpoints).map((e) => e.key)).toEqual(['10.180.0.2:8080']);
  });

  it('hands back the service port it planned, and shares its address lists (no copies per sync)', () => {
    const [port] = servicePortsFromService(service({ externalIPs: ['192.168.99.11'] }), 'IPv4', nullLogger);
    const p = planServicePort(port!, REMOTE, CONTEXT);
    expect(p.service).toBe(port);
    expect(p.externalIPs).toBe(port!.externalIPs);
  });

  it('is pure: the same input plans equal data, and the input endpoints are not touched', () => {
    const endpoints = Object.freeze([...MIXED]);
    const svc = service({ type: 'NodePort', externalTrafficPolicy: 'Local' });
    expect(plan(svc, endpoints)).toEqual(plan(svc, endpoints));
    expect(endpoints).toEqual(MIXED);
  });
});
