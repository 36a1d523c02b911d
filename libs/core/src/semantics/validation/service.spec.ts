import type { V1Service } from '@kubernetes/client-node';
import { validateService } from './service.js';

/** kube-dns as the API server returns it: every defaulted field present. */
const KUBE_DNS = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'kube-dns',
    namespace: 'kube-system',
    uid: '5c3e2a4e-9a43-4c2c-8d0b-1b2c3d4e5f60',
    resourceVersion: '231',
    creationTimestamp: '2026-11-01T10:00:00Z',
    labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' },
    annotations: { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' },
  },
  spec: {
    type: 'ClusterIP',
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10'],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    internalTrafficPolicy: 'Cluster',
    sessionAffinity: 'None',
    selector: { 'k8s-app': 'kube-dns' },
    ports: [
      { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
      { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
      { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
    ],
  },
  status: { loadBalancer: {} },
};

function svc(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}, status?: unknown): V1Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default', ...metadata }, spec, ...(status ? { status } : {}) } as V1Service;
}

const PORT = { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' };

/** Objects the API server accepts (some as written by hand, before its defaulting). */
const VALID: ReadonlyArray<readonly [string, V1Service]> = [
  ['kube-dns as served by the API server', KUBE_DNS as unknown as V1Service],
  [
    'the kubernetes default Service',
    svc({ clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.1'], type: 'ClusterIP', sessionAffinity: 'None', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }] }, { name: 'kubernetes' }),
  ],
  ['one unnamed port (a name is only required with several)', svc({ clusterIP: '10.96.0.2', ports: [{ port: 80 }] })],
  ['only clusterIP written (the API server fills clusterIPs)', svc({ clusterIP: '10.96.0.3', ports: [PORT] })],
  ['only clusterIPs written', svc({ clusterIPs: ['10.96.0.3'], ports: [PORT] })],
  ['no cluster IP yet (allocated by the API server)', svc({ ports: [PORT] })],
  ['headless with "None" and no ports', svc({ clusterIP: 'None', clusterIPs: ['None'], selector: { app: 'db' } })],
  ['headless with ports', svc({ clusterIP: 'None', ports: [{ port: 5432 }] })],
  ['ExternalName with a trailing dot', svc({ type: 'ExternalName', externalName: 'search.example.com.' })],
  [
    'dual-stack RequireDualStack',
    svc({ clusterIPs: ['10.96.0.4', 'fd00:10:96::4'], clusterIP: '10.96.0.4', ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack', ports: [PORT] }),
  ],
  ['IPv6 single-stack', svc({ clusterIP: 'fd00:10:96::5', ipFamilies: ['IPv6'], ports: [PORT] })],
  ['IPv4 with leading zeros (legacy sloppy parsing)', svc({ clusterIP: '010.096.000.006', ports: [PORT] })],
  ['named targetPort (IANA service name)', svc({ clusterIP: '10.96.0.7', ports: [{ name: 'http', port: 80, targetPort: 'http-alt' }] })],
  ['targetPort 0 and "" default to port', svc({ clusterIP: '10.96.0.7', ports: [{ name: 'a', port: 80, targetPort: 0 }, { name: 'b', port: 81, targetPort: '' }] })],
  ['long DNS-label port names (not limited to 15 like IANA names)', svc({ clusterIP: '10.96.0.7', ports: [{ name: 'metrics-port-for-prometheus', port: 9090 }, { name: '8443', port: 8443 }] })],
  ['appProtocol', svc({ clusterIP: '10.96.0.7', ports: [{ name: 'h2', port: 80, appProtocol: 'kubernetes.io/h2c' }, { name: 'web', port: 81, appProtocol: 'http' }] })],
  ['UDP and TCP on the same port', svc({ clusterIP: '10.96.0.8', ports: [{ name: 'a', port: 53, protocol: 'UDP' }, { name: 'b', port: 53, protocol: 'TCP' }] })],
  ['SCTP', svc({ clusterIP: '10.96.0.8', ports: [{ port: 9999, protocol: 'SCTP' }] })],
  ['NodePort with externalTrafficPolicy Local', svc({ type: 'NodePort', clusterIP: '10.96.0.9', externalTrafficPolicy: 'Local', ports: [{ port: 80, nodePort: 30080 }] })],
  ['NodePort without a node port yet (allocated)', svc({ type: 'NodePort', clusterIP: '10.96.0.9', ports: [{ port: 80 }] })],
  [
    'LoadBalancer, Local, health check port, source ranges padded with spaces, ingress VIP/Proxy/hostname',
    svc(
      {
        type: 'LoadBalancer',
        clusterIP: '10.96.1.1',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 32100,
        allocateLoadBalancerNodePorts: true,
        loadBalancerClass: 'example.com/lb',
        loadBalancerSourceRanges: ['198.51.100.0/24', ' 203.0.113.128/25 ', '2001:db8::/64'],
        ports: [{ name: 'https', port: 443, nodePort: 30443 }],
      },
      {},
      { loadBalancer: { ingress: [{ ip: '203.0.113.10', ipMode: 'VIP' }, { ip: '203.0.113.11', ipMode: 'Proxy' }, { hostname: 'lb.example.com' }, { ip: '203.0.113.12' }] } },
    ),
  ],
  ['LoadBalancer source ranges in the legacy annotation', svc({ type: 'LoadBalancer', clusterIP: '10.96.1.2', ports: [PORT] }, { annotations: { 'service.beta.kubernetes.io/load-balancer-source-ranges': ' 10.0.0.0/8, 192.168.0.0/16 ' } })],
  ['ClusterIP with externalIPs and externalTrafficPolicy', svc({ clusterIP: '10.96.0.11', externalIPs: ['192.0.2.50', '2001:db8::50'], externalTrafficPolicy: 'Cluster', ports: [PORT] })],
  ['ClientIP affinity with the maximum timeout', svc({ clusterIP: '10.96.0.12', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 86400 } }, ports: [PORT] })],
  ['ClientIP affinity without a config (defaulted to 3 h)', svc({ clusterIP: '10.96.0.12', sessionAffinity: 'ClientIP', ports: [PORT] })],
  ['internalTrafficPolicy Local', svc({ clusterIP: '10.96.0.13', internalTrafficPolicy: 'Local', ports: [PORT] })],
  ['trafficDistribution PreferClose', svc({ clusterIP: '10.96.0.14', trafficDistribution: 'PreferClose', ports: [PORT] })],
  ['trafficDistribution PreferSameNode', svc({ clusterIP: '10.96.0.14', trafficDistribution: 'PreferSameNode', ports: [PORT] })],
  ['trafficDistribution a newer API server may know (ignored, as upstream)', svc({ clusterIP: '10.96.0.14', trafficDistribution: 'PreferSameRegion', ports: [PORT] })],
  ['a 63-character name', svc({ clusterIP: '10.96.0.15', ports: [PORT] }, { name: `a${'b'.repeat(61)}c` })],
  ['explicit nulls where the API allows absence', svc({ clusterIP: '10.96.0.16', ports: [PORT], selector: null, externalIPs: null, trafficDistribution: null }, { labels: null })],
];

/** Objects the API server refuses for a field set where it has no effect: the proxy ignores that field, so they pass. */
const WITHOUT_EFFECT: ReadonlyArray<readonly [string, V1Service]> = [
  ['no ports (nothing to program)', svc({ clusterIP: '10.96.0.20' })],
  ['a headless NodePort (not proxied)', svc({ type: 'NodePort', clusterIP: 'None', ports: [PORT] })],
  ['an ExternalName with a cluster IP (not proxied)', svc({ type: 'ExternalName', externalName: 'a.example.com', clusterIP: '10.96.0.20' })],
  ['source ranges on a ClusterIP Service (no load balancer IP to filter)', svc({ clusterIP: '10.96.0.20', loadBalancerSourceRanges: ['10.0.0.0/8'], ports: [PORT] })],
  ['an affinity config with None (unused)', svc({ clusterIP: '10.96.0.20', sessionAffinity: 'None', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } }, ports: [PORT] })],
  ['externalTrafficPolicy on an internal-only Service (unused)', svc({ clusterIP: '10.96.0.20', externalTrafficPolicy: 'Local', ports: [PORT] })],
  ['healthCheckNodePort on a NodePort Service with Local policy (unused)', svc({ type: 'NodePort', clusterIP: '10.96.0.20', externalTrafficPolicy: 'Local', healthCheckNodePort: 32000, ports: [PORT] })],
  ['allocateLoadBalancerNodePorts on a NodePort (unused)', svc({ type: 'NodePort', clusterIP: '10.96.0.20', allocateLoadBalancerNodePorts: false, ports: [PORT] })],
];

describe('validateService accepts what the API server accepts', () => {
  it.each(VALID)('%s', (_, service) => {
    expect(validateService(service)).toEqual([]);
  });
});

describe('validateService is not stricter than needed about fields without effect', () => {
  it.each(WITHOUT_EFFECT)('%s', (_, service) => {
    expect(validateService(service)).toEqual([]);
  });
});

type Case = readonly [string, V1Service, string];
const HOSTILE_NAME = 'evil" -j ACCEPT\n-A INPUT -j ACCEPT\n#';

/** Objects the API server refuses, and the field each is refused for. */
const INVALID: readonly Case[] = [
  ['an injected rule in the name', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: HOSTILE_NAME }), 'metadata.name'],
  ['an injected rule in a port name', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, name: 'x" -j ACCEPT #' }] }), 'spec.ports[0].name'],
  ['a NUL byte in the name', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: 'a\0b' }), 'metadata.name'],
  ['a tab in the name', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: 'a\tb' }), 'metadata.name'],
  ['an unclosed quote in the name', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: 'a"b' }), 'metadata.name'],
  ['a newline in the namespace', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { namespace: 'default\n-A X' }), 'metadata.namespace'],
  ['a 64-character name', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: 'a'.repeat(64) }), 'metadata.name'],
  ['a name starting with a digit (DNS-1035)', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: '1web' }), 'metadata.name'],
  ['an upper-case name', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: 'Web' }), 'metadata.name'],
  ['a dotted name', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: 'web.app' }), 'metadata.name'],
  ['no name', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: undefined }), 'metadata.name'],
  ['a number as name', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: 42 }), 'metadata.name'],
  ['no namespace', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { namespace: undefined }), 'metadata.namespace'],
  ['a 64-character namespace', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { namespace: 'n'.repeat(64) }), 'metadata.namespace'],
  ['a bad label key', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { labels: { 'a b': 'x' } }), 'metadata.labels["a b"]'],
  ['a bad label value', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { labels: { app: 'x\ny' } }), 'metadata.labels[app]'],
  ['a non-string label value', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { labels: { app: 1 } }), 'metadata.labels[app]'],
  ['a bad annotation key', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { annotations: { 'a/b/c': 'x' } }), 'metadata.annotations[a/b/c]'],
  ['annotations over 256 KiB', svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { annotations: { big: 'x'.repeat(262_145) } }), 'metadata.annotations'],
  ['an unknown type', svc({ type: 'Magic', clusterIP: '10.96.0.20', ports: [PORT] }), 'spec.type'],
  ['spec not an object', svc('spec' as never), 'spec'],
  ['ports not a list', svc({ clusterIP: '10.96.0.20', ports: { port: 80 } }), 'spec.ports'],
  ['two ports, one unnamed', svc({ clusterIP: '10.96.0.20', ports: [PORT, { port: 81 }] }), 'spec.ports[1].name'],
  ['two ports with the same name', svc({ clusterIP: '10.96.0.20', ports: [PORT, { ...PORT, port: 81 }] }), 'spec.ports[1].name'],
  ['two ports with the same protocol and port', svc({ clusterIP: '10.96.0.20', ports: [PORT, { ...PORT, name: 'other' }] }), 'spec.ports[1]'],
  ['an upper-case port name', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, name: 'HTTP' }] }), 'spec.ports[0].name'],
  ['a 64-character port name', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, name: 'p'.repeat(64) }] }), 'spec.ports[0].name'],
  ['port 0', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, port: 0 }] }), 'spec.ports[0].port'],
  ['port 65536', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, port: 65536 }] }), 'spec.ports[0].port'],
  ['a negative port', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, port: -1 }] }), 'spec.ports[0].port'],
  ['a fractional port', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, port: 80.5 }] }), 'spec.ports[0].port'],
  ['a port as text', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, port: '80' }] }), 'spec.ports[0].port'],
  ['protocol ICMP', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, protocol: 'ICMP' }] }), 'spec.ports[0].protocol'],
  ['protocol in lower case', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, protocol: 'tcp' }] }), 'spec.ports[0].protocol'],
  ['targetPort 70000', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, targetPort: 70000 }] }), 'spec.ports[0].targetPort'],
  ['targetPort an all-digit name', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, targetPort: '8080' }] }), 'spec.ports[0].targetPort'],
  ['targetPort a 16-character name', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, targetPort: 'abcdefghijklmnop' }] }), 'spec.ports[0].targetPort'],
  ['targetPort with an injected rule', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, targetPort: 'x" -j ACCEPT' }] }), 'spec.ports[0].targetPort'],
  ['targetPort an object', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, targetPort: {} }] }), 'spec.ports[0].targetPort'],
  ['nodePort 70000', svc({ type: 'NodePort', clusterIP: '10.96.0.20', ports: [{ ...PORT, nodePort: 70000 }] }), 'spec.ports[0].nodePort'],
  ['nodePort on a ClusterIP Service', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, nodePort: 30080 }] }), 'spec.ports[0].nodePort'],
  ['a duplicate nodePort', svc({ type: 'NodePort', clusterIP: '10.96.0.20', ports: [{ ...PORT, nodePort: 30080 }, { ...PORT, name: 'b', port: 81, nodePort: 30080 }] }), 'spec.ports[1].nodePort'],
  ['a bad appProtocol', svc({ clusterIP: '10.96.0.20', ports: [{ ...PORT, appProtocol: 'a b' }] }), 'spec.ports[0].appProtocol'],
  ['an invalid cluster IP', svc({ clusterIP: '10.96.0.300', ports: [PORT] }), 'spec.clusterIP'],
  ['a cluster IP with an injected rule', svc({ clusterIP: '10.96.0.1 -j ACCEPT', ports: [PORT] }), 'spec.clusterIP'],
  ['an IPv6 zone in a cluster IP', svc({ clusterIPs: ['fe80::1%eth0'], ports: [PORT] }), 'spec.clusterIPs[0]'],
  ['clusterIPs[0] different from clusterIP', svc({ clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.21'], ports: [PORT] }), 'spec.clusterIPs'],
  ['"None" not alone', svc({ clusterIPs: ['None', '10.96.0.20'], ports: [PORT] }), 'spec.clusterIPs'],
  ['two IPv4 cluster IPs', svc({ clusterIPs: ['10.96.0.20', '10.96.0.21'], ports: [PORT] }), 'spec.clusterIPs'],
  ['three cluster IPs', svc({ clusterIPs: ['10.96.0.20', 'fd00::1', '10.96.0.21'], ports: [PORT] }), 'spec.clusterIPs'],
  ['a cluster IP of the wrong family', svc({ clusterIP: '10.96.0.20', ipFamilies: ['IPv6'], ports: [PORT] }), 'spec.clusterIP'],
  ['an unknown IP family', svc({ clusterIP: '10.96.0.20', ipFamilies: ['IPv5'], ports: [PORT] }), 'spec.ipFamilies[0]'],
  ['a repeated IP family', svc({ clusterIP: '10.96.0.20', ipFamilies: ['IPv4', 'IPv4'], ports: [PORT] }), 'spec.ipFamilies[1]'],
  ['an unknown ipFamilyPolicy', svc({ clusterIP: '10.96.0.20', ipFamilyPolicy: 'DualStack', ports: [PORT] }), 'spec.ipFamilyPolicy'],
  ['an ExternalName without externalName', svc({ type: 'ExternalName' }), 'spec.externalName'],
  ['an ExternalName that is not a DNS name', svc({ type: 'ExternalName', externalName: 'a b.com' }), 'spec.externalName'],
  ['an invalid external IP', svc({ clusterIP: '10.96.0.20', externalIPs: ['192.0.2.300'], ports: [PORT] }), 'spec.externalIPs[0]'],
  ['external IPs not a list', svc({ clusterIP: '10.96.0.20', externalIPs: '192.0.2.1', ports: [PORT] }), 'spec.externalIPs'],
  ['an invalid source range', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', loadBalancerSourceRanges: ['10.0.0.0/33'], ports: [PORT] }), 'spec.loadBalancerSourceRanges[0]'],
  ['a source range with an injected rule', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', loadBalancerSourceRanges: ['10.0.0.0/8 -j ACCEPT'], ports: [PORT] }), 'spec.loadBalancerSourceRanges[0]'],
  ['a healthCheckNodePort of the wrong type', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', externalTrafficPolicy: 'Local', healthCheckNodePort: '32000', ports: [PORT] }), 'spec.healthCheckNodePort'],
  ['a non-boolean allocateLoadBalancerNodePorts', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', allocateLoadBalancerNodePorts: 'yes', ports: [PORT] }), 'spec.allocateLoadBalancerNodePorts'],
  [
    'an invalid source range in the annotation',
    svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', ports: [PORT] }, { annotations: { 'service.beta.kubernetes.io/load-balancer-source-ranges': '10.0.0.0/8,bogus' } }),
    'metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]',
  ],
  ['an invalid ingress IP', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', ports: [PORT] }, {}, { loadBalancer: { ingress: [{ ip: '203.0.113.1\n-A X' }] } }), 'status.loadBalancer.ingress[0].ip'],
  ['an ingress hostname that is an IP', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', ports: [PORT] }, {}, { loadBalancer: { ingress: [{ hostname: '203.0.113.1' }] } }), 'status.loadBalancer.ingress[0].hostname'],
  ['an unknown ipMode', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', ports: [PORT] }, {}, { loadBalancer: { ingress: [{ ip: '203.0.113.1', ipMode: 'Tunnel' }] } }), 'status.loadBalancer.ingress[0].ipMode'],
  ['an ipMode without an ip', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', ports: [PORT] }, {}, { loadBalancer: { ingress: [{ hostname: 'lb.example.com', ipMode: 'VIP' }] } }), 'status.loadBalancer.ingress[0].ipMode'],
  ['ingress not a list', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', ports: [PORT] }, {}, { loadBalancer: { ingress: 'x' } }), 'status.loadBalancer.ingress'],
  ['an unknown sessionAffinity', svc({ clusterIP: '10.96.0.20', sessionAffinity: 'Cookie', ports: [PORT] }), 'spec.sessionAffinity'],
  ['an affinity timeout of 0', svc({ clusterIP: '10.96.0.20', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } }, ports: [PORT] }), 'spec.sessionAffinityConfig.clientIP.timeoutSeconds'],
  ['an affinity timeout over a day', svc({ clusterIP: '10.96.0.20', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 86401 } }, ports: [PORT] }), 'spec.sessionAffinityConfig.clientIP.timeoutSeconds'],
  ['an unknown externalTrafficPolicy', svc({ type: 'NodePort', clusterIP: '10.96.0.20', externalTrafficPolicy: 'Nearest', ports: [PORT] }), 'spec.externalTrafficPolicy'],
  ['an unknown internalTrafficPolicy', svc({ clusterIP: '10.96.0.20', internalTrafficPolicy: 'Node', ports: [PORT] }), 'spec.internalTrafficPolicy'],
  ['healthCheckNodePort out of range', svc({ type: 'LoadBalancer', clusterIP: '10.96.0.20', externalTrafficPolicy: 'Local', healthCheckNodePort: 70000, ports: [PORT] }), 'spec.healthCheckNodePort'],
  ['an empty trafficDistribution', svc({ clusterIP: '10.96.0.20', trafficDistribution: '', ports: [PORT] }), 'spec.trafficDistribution'],
  ['a trafficDistribution with an injected rule', svc({ clusterIP: '10.96.0.20', trafficDistribution: 'PreferClose" -j DROP', ports: [PORT] }), 'spec.trafficDistribution'],
  ['a non-string trafficDistribution', svc({ clusterIP: '10.96.0.20', trafficDistribution: 7, ports: [PORT] }), 'spec.trafficDistribution'],
  ['a bad selector', svc({ clusterIP: '10.96.0.20', selector: { app: 'a b' }, ports: [PORT] }), 'spec.selector[app]'],
];

describe('validateService refuses what the API server refuses, naming the field', () => {
  it.each(INVALID)('%s', (_, service, field) => {
    const errors = validateService(service);
    expect(errors.map((e) => e.field)).toContain(field);
    for (const e of errors) expect(e.message.length).toBeGreaterThan(0);
  });

  it('reports every bad field of one object', () => {
    const errors = validateService(svc({ clusterIP: 'x', ports: [{ name: 'x" -j ACCEPT #', port: 0, protocol: 'ICMP' }] }, { name: HOSTILE_NAME }));
    expect(errors.map((e) => e.field)).toEqual(
      expect.arrayContaining(['metadata.name', 'spec.ports[0].name', 'spec.ports[0].port', 'spec.ports[0].protocol', 'spec.clusterIP']),
    );
  });

  it('keeps hostile values on one line and short in messages', () => {
    const [error] = validateService(svc({ clusterIP: '10.96.0.20', ports: [PORT] }, { name: `${HOSTILE_NAME}${'z'.repeat(10_000)}` }));
    expect(error.message).not.toContain('\n');
    expect(error.message.length).toBeLessThan(500);
  });
});

describe('validateService never throws', () => {
  const garbage: unknown[] = [
    undefined,
    null,
    42,
    'svc',
    [],
    {},
    { metadata: [] },
    { metadata: { name: 'a', namespace: 'b' }, spec: [] },
    { metadata: { name: 'a', namespace: 'b' }, spec: { ports: [null, 1, 'x', [], { port: {} }] } },
    { metadata: { name: 'a', namespace: 'b' }, spec: { clusterIPs: [1, null], ipFamilies: {}, type: 5, sessionAffinityConfig: 'x', sessionAffinity: 'ClientIP' } },
    { metadata: { name: 'a', namespace: 'b', labels: 'x', annotations: [1] }, spec: { ports: [{ port: 1 }] }, status: { loadBalancer: { ingress: [null, { ip: 5, ipMode: 3, hostname: [] }] } } },
    { metadata: { name: 'a', namespace: 'b' }, spec: { type: 'LoadBalancer', ports: [{ port: 1 }], loadBalancerSourceRanges: [null], externalIPs: [{}] }, status: 'x' },
  ];
  it.each(garbage.map((g) => [JSON.stringify(g) ?? String(g), g]))('%s', (_, g) => {
    const errors = validateService(g as V1Service);
    expect(errors.length).toBeGreaterThan(0);
  });

  it('reports a getter that throws as an invalid object', () => {
    const evil = { metadata: { name: 'a', namespace: 'b' } } as Record<string, unknown>;
    Object.defineProperty(evil, 'spec', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(validateService(evil as V1Service)).toEqual([{ field: '<object>', message: 'cannot be validated: boom' }]);
  });
});
