// The v1.36 rewrite of our table, checked against upstream's verbatim v1.36+ TestOverallNFTablesRules
// dump: the same Services through our proxier, rewritten, give upstream's table line for line.
import { readFileSync } from 'node:fs';
import type { V1EndpointSlice } from '@kube-proxy/core';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, normalizedLines, TEST_NODE_NAME } from './fake-proxier.js';
import { runPacketFlows, V136_LAYOUT } from './packet-flow.js';
import { toUpstreamV136Layout } from './upstream-v136-layout.js';

const verbatim = readFileSync(new URL('../trace/fixtures/upstream-v1.36-overall.nft', import.meta.url), 'utf8');

const tcp80 = (extra: Record<string, unknown> = {}) => [{ name: 'p80', port: 80, protocol: 'TCP', ...extra }];

function sliceWith(ns: string, name: string, endpoints: ReadonlyArray<{ ip: string; local?: boolean }>): V1EndpointSlice {
  return makeTestEndpointSlice(ns, name, 1, (eps) => {
    eps.addressType = 'IPv4';
    eps.endpoints = endpoints.map((e) => ({ addresses: [e.ip], nodeName: e.local === false ? 'other-node' : TEST_NODE_NAME }));
    eps.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
  });
}

describe('our table rewritten into upstream v1.36+ layout', () => {
  it("gives upstream's verbatim TestOverallNFTablesRules table for that test's Services", async () => {
    const { proxier, nft } = newFakeProxier('IPv4');
    for (const s of [
      makeTestService('ns1', 'svc1', (s) => Object.assign(s.spec, { clusterIP: '172.30.0.41', ports: tcp80() })),
      makeTestService('ns2', 'svc2', (s) => {
        Object.assign(s.spec, { type: 'LoadBalancer', externalTrafficPolicy: 'Local', clusterIP: '172.30.0.42', ports: tcp80({ nodePort: 3001 }), externalIPs: ['192.168.99.22'], healthCheckNodePort: 30000 });
        s.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
      }),
      makeTestService('ns3', 'svc3', (s) => Object.assign(s.spec, { type: 'NodePort', clusterIP: '172.30.0.43', ports: tcp80({ nodePort: 3003 }) })),
      makeTestService('ns4', 'svc4', (s) => Object.assign(s.spec, { type: 'NodePort', clusterIP: '172.30.0.44', externalIPs: ['192.168.99.33'], ports: tcp80({ targetPort: 80 }) })),
      makeTestService('ns5', 'svc5', (s) => {
        Object.assign(s.spec, { type: 'LoadBalancer', externalTrafficPolicy: 'Cluster', clusterIP: '172.30.0.45', ports: tcp80({ nodePort: 3002 }), healthCheckNodePort: 30000, loadBalancerSourceRanges: [' 203.0.113.0/25'], sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } });
        s.status.loadBalancer = { ingress: [{ ip: '5.6.7.8' }] };
      }),
      makeTestService('ns6', 'svc6', (s) => Object.assign(s.spec, { type: 'ClusterIP', clusterIP: '172.30.0.46', ports: tcp80({ targetPort: 80 }) })),
    ]) proxier.onServiceAdd(s);
    for (const eps of [
      sliceWith('ns1', 'svc1', [{ ip: '10.180.0.1' }]),
      sliceWith('ns2', 'svc2', [{ ip: '10.180.0.2', local: false }]),
      sliceWith('ns3', 'svc3', [{ ip: '10.180.0.3' }]),
      sliceWith('ns4', 'svc4', [{ ip: '10.180.0.4', local: false }, { ip: '10.180.0.5' }]),
      sliceWith('ns5', 'svc5', [{ ip: '10.180.0.3' }]),
    ]) proxier.onEndpointSliceAdd(eps);
    await proxier.syncProxyRules();

    const local = new Set(['10.180.0.1', '10.180.0.3', '10.180.0.5']);
    expect(normalizedLines(toUpstreamV136Layout(nft.table.dump(), 'ip', (ip) => local.has(ip)))).toEqual(normalizedLines(verbatim));

    // runPacketFlows traces each flow through both layouts.
    const { got, want } = runPacketFlows(nft.table, ['192.168.0.2'], [{ name: 'hairpin', sourceIP: '10.180.0.5', destIP: '172.30.0.44', destPort: 80, output: '10.180.0.4:80, 10.180.0.5:80', masq: true }]);
    expect(got).toEqual(want);
    expect(got.map((g) => g.name)).toEqual(['hairpin', `hairpin${V136_LAYOUT}`]);
  });

  it('spells IPv6 endpoints in the DNAT map and the hairpin set with ip6 and ipv6_addr', () => {
    const dump = [
      'add table ip6 kube-proxy { comment "rules for kube-proxy" ; }',
      'add chain ip6 kube-proxy mark-for-masquerade',
      'add chain ip6 kube-proxy masquerading',
      'add chain ip6 kube-proxy services',
      'add chain ip6 kube-proxy service-X-ns/s/tcp/p',
      'add chain ip6 kube-proxy endpoint-Y-ns/s/tcp/p__fd00.1/80',
      'add rule ip6 kube-proxy mark-for-masquerade mark set mark or 0x4000',
      'add rule ip6 kube-proxy service-X-ns/s/tcp/p ip6 daddr fd00:96::1 ip6 saddr != fd00:10::/64 jump mark-for-masquerade',
      'add rule ip6 kube-proxy service-X-ns/s/tcp/p numgen random mod 1 vmap { 0 : goto endpoint-Y-ns/s/tcp/p__fd00.1/80 }',
      'add rule ip6 kube-proxy endpoint-Y-ns/s/tcp/p__fd00.1/80 ip6 saddr fd00::1 jump mark-for-masquerade',
      'add rule ip6 kube-proxy endpoint-Y-ns/s/tcp/p__fd00.1/80 meta l4proto tcp dnat to [fd00::1]:80',
    ].join('\n');
    const out = toUpstreamV136Layout(dump, 'ip6').split('\n');
    expect(out).toContain('add rule ip6 kube-proxy service-X-ns/s/tcp/p meta l4proto tcp dnat ip6 addr . port to numgen random mod 1 map { 0 : fd00::1 . 80 }');
    expect(out).toContain('add rule ip6 kube-proxy services ip6 daddr @cluster-ips ip6 saddr != fd00:10::/64 mark set mark or 0x4000 comment "masquerade clusterIP traffic from outside cluster"');
    expect(out).toContain('add element ip6 kube-proxy hairpin-connections { fd00::1 . fd00::1 . tcp . 80 }');
    expect(out).toContain('add set ip6 kube-proxy hairpin-connections { type ipv6_addr . ipv6_addr . inet_proto . inet_service ; comment "service hairpin connections" ; }');
    expect(out.some((l) => l.includes('endpoint-Y') || l.includes('mark-for-masquerade'))).toBe(false);
  });
});
