import type { V1EndpointSlice } from '@kubernetes/client-node';
import { validateEndpointSlice } from './endpoint-slice.js';

/** A slice as the EndpointSlice controller writes it. */
const CONTROLLER_SLICE = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name: 'kube-dns-m4x7z',
    generateName: 'kube-dns-',
    namespace: 'kube-system',
    resourceVersion: '884',
    labels: {
      'kubernetes.io/service-name': 'kube-dns',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      'k8s-app': 'kube-dns',
    },
    annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-11-01T10:00:05Z' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'kube-dns', uid: 'u', controller: true, blockOwnerDeletion: true }],
  },
  addressType: 'IPv4',
  endpoints: [
    {
      addresses: ['10.244.0.2'],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: 'node-1',
      zone: 'zone-a',
      hints: { forZones: [{ name: 'zone-a' }], forNodes: [{ name: 'node-1' }] },
      targetRef: { kind: 'Pod', name: 'coredns-abc', namespace: 'kube-system', uid: 'p' },
    },
    { addresses: ['10.244.1.3'], conditions: { ready: false, serving: true, terminating: true }, nodeName: 'node-2.example.com' },
  ],
  ports: [
    { name: 'dns', port: 53, protocol: 'UDP' },
    { name: 'dns-tcp', port: 53, protocol: 'TCP' },
    { name: 'metrics', port: 9153, protocol: 'TCP', appProtocol: 'http' },
  ],
};

function slice(body: Record<string, unknown>, metadata: Record<string, unknown> = {}): V1EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-abc12', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' }, ...metadata },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.244.1.11'], conditions: { ready: true } }],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    ...body,
  } as V1EndpointSlice;
}

const VALID: ReadonlyArray<readonly [string, V1EndpointSlice]> = [
  ['a controller-written slice', CONTROLLER_SLICE as V1EndpointSlice],
  ['an IPv6 slice', slice({ addressType: 'IPv6', endpoints: [{ addresses: ['fd00:10:244::11'] }] })],
  ['an FQDN slice (valid; the proxy ignores it)', slice({ addressType: 'FQDN', endpoints: [{ addresses: ['db-0.db.default.svc.cluster.local'] }] })],
  ['a loopback endpoint (a manifest on a laptop)', slice({ endpoints: [{ addresses: ['127.0.0.1'] }] })],
  ['no endpoints, no ports', slice({ endpoints: [], ports: [] })],
  ['one unnamed port, protocol and port unset', slice({ ports: [{}] })],
  ['an unnamed port with "" as name', slice({ ports: [{ name: '', port: 80 }] })],
  ['no conditions (nil means ready)', slice({ endpoints: [{ addresses: ['10.244.1.11'] }] })],
  ['null conditions fields', slice({ endpoints: [{ addresses: ['10.244.1.11'], conditions: { ready: null, serving: null } }] })],
  ['no service-name label (the proxy ignores it)', slice({}, { labels: { app: 'x' } })],
  ['a 253-character name', slice({}, { name: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` })],
  ['a hostname', slice({ endpoints: [{ addresses: ['10.244.1.11'], hostname: 'web-0' }] })],
  ['an IPv4-mapped IPv6 text in an IPv4 slice (Go reads it as IPv4)', slice({ endpoints: [{ addresses: ['::ffff:10.244.1.11'] }] })],
];

describe('validateEndpointSlice accepts what the API server accepts', () => {
  it.each(VALID)('%s', (_, s) => {
    expect(validateEndpointSlice(s)).toEqual([]);
  });
});

const HOSTILE = 'evil" -j ACCEPT\n-A INPUT -j ACCEPT\n#';
const INVALID: ReadonlyArray<readonly [string, V1EndpointSlice, string]> = [
  ['a hostile service-name label', slice({}, { labels: { 'kubernetes.io/service-name': HOSTILE } }), 'metadata.labels[kubernetes.io/service-name]'],
  ['a service-name label that is a label value but no Service name', slice({}, { labels: { 'kubernetes.io/service-name': 'Web_1' } }), 'metadata.labels[kubernetes.io/service-name]'],
  ['a hostile name', slice({}, { name: HOSTILE }), 'metadata.name'],
  ['a NUL in the name', slice({}, { name: 'web\0x' }), 'metadata.name'],
  ['a 254-character name', slice({}, { name: 'a'.repeat(254) }), 'metadata.name'],
  ['no namespace', slice({}, { namespace: undefined }), 'metadata.namespace'],
  ['no addressType', slice({ addressType: undefined }), 'addressType'],
  ['an unknown addressType', slice({ addressType: 'IPv5' }), 'addressType'],
  ['an endpoint without addresses', slice({ endpoints: [{ addresses: [] }] }), 'endpoints[0].addresses'],
  ['an endpoint with 101 addresses', slice({ endpoints: [{ addresses: Array.from({ length: 101 }, (_, i) => `10.0.0.${i % 250}`) }] }), 'endpoints[0].addresses'],
  ['1001 endpoints', slice({ endpoints: Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] })) }), 'endpoints'],
  ['an invalid IPv4 address', slice({ endpoints: [{ addresses: ['10.244.1.300'] }] }), 'endpoints[0].addresses[0]'],
  ['an address with an injected rule', slice({ endpoints: [{ addresses: ['10.244.1.1 -j ACCEPT'] }] }), 'endpoints[0].addresses[0]'],
  ['an IPv6 address in an IPv4 slice', slice({ endpoints: [{ addresses: ['fd00::1'] }] }), 'endpoints[0].addresses[0]'],
  ['an IPv4 address in an IPv6 slice', slice({ addressType: 'IPv6', endpoints: [{ addresses: ['10.0.0.1'] }] }), 'endpoints[0].addresses[0]'],
  ['an invalid FQDN', slice({ addressType: 'FQDN', endpoints: [{ addresses: ['localhost'] }] }), 'endpoints[0].addresses[0]'],
  ['a non-boolean condition', slice({ endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: 'true' } }] }), 'endpoints[0].conditions.ready'],
  ['a hostile nodeName', slice({ endpoints: [{ addresses: ['10.0.0.1'], nodeName: HOSTILE }] }), 'endpoints[0].nodeName'],
  ['a hostile zone', slice({ endpoints: [{ addresses: ['10.0.0.1'], zone: 'zone a' }] }), 'endpoints[0].zone'],
  ['a bad hostname', slice({ endpoints: [{ addresses: ['10.0.0.1'], hostname: 'Web.0' }] }), 'endpoints[0].hostname'],
  ['nine zone hints', slice({ endpoints: [{ addresses: ['10.0.0.1'], hints: { forZones: Array.from({ length: 9 }, (_, i) => ({ name: `z${i}` })) } }] }), 'endpoints[0].hints.forZones'],
  ['a repeated zone hint', slice({ endpoints: [{ addresses: ['10.0.0.1'], hints: { forZones: [{ name: 'a' }, { name: 'a' }] } }] }), 'endpoints[0].hints.forZones[1].name'],
  ['a bad node hint', slice({ endpoints: [{ addresses: ['10.0.0.1'], hints: { forNodes: [{ name: 'Node_1' }] } }] }), 'endpoints[0].hints.forNodes[0].name'],
  ['too many topology labels', slice({ endpoints: [{ addresses: ['10.0.0.1'], deprecatedTopology: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }] }), 'endpoints[0].deprecatedTopology'],
  ['a hostile port name', slice({ ports: [{ name: 'x" -j ACCEPT #', port: 80 }] }), 'ports[0].name'],
  ['a repeated port name', slice({ ports: [{ name: 'a', port: 80 }, { name: 'a', port: 81 }] }), 'ports[1].name'],
  ['two unnamed ports', slice({ ports: [{ port: 80 }, { name: '', port: 81 }] }), 'ports[1].name'],
  ['an unknown protocol', slice({ ports: [{ name: 'a', port: 80, protocol: 'ICMP' }] }), 'ports[0].protocol'],
  ['port 0', slice({ ports: [{ name: 'a', port: 0 }] }), 'ports[0].port'],
  ['port 65536', slice({ ports: [{ name: 'a', port: 65536 }] }), 'ports[0].port'],
  ['a negative port', slice({ ports: [{ name: 'a', port: -80 }] }), 'ports[0].port'],
  ['101 ports', slice({ ports: Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, port: 1000 + i })) }), 'ports'],
  ['ports not a list', slice({ ports: 'http' }), 'ports'],
];

describe('validateEndpointSlice refuses what the API server refuses, naming the field', () => {
  it.each(INVALID)('%s', (_, s, field) => {
    expect(validateEndpointSlice(s).map((e) => e.field)).toContain(field);
  });
});

describe('validateEndpointSlice never throws', () => {
  const garbage: unknown[] = [
    null,
    'x',
    [],
    {},
    { metadata: { name: 'a', namespace: 'b' }, addressType: 4, endpoints: [null, 'x', { addresses: 'x', conditions: [], hints: 'x' }] },
    { metadata: { name: 'a', namespace: 'b' }, addressType: 'IPv4', endpoints: [{ addresses: [null, 5, {}], hints: { forZones: [null, 'z', { name: 3 }], forNodes: {} } }], ports: [null, { name: 5, protocol: [], port: 'x' }] },
  ];
  it.each(garbage.map((g) => [JSON.stringify(g), g]))('%s', (_, g) => {
    expect(validateEndpointSlice(g as V1EndpointSlice).length).toBeGreaterThan(0);
  });
});
