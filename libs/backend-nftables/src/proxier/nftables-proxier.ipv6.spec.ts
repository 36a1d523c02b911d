// IPv6 packet flows. Upstream runs only TestNodePorts in both families (ported in the flows spec);
// these repeat TestNoEndpointsReject, TestClusterIPGeneral's drop of unallocated ClusterIPs and
// TestLoadBalancer's source ranges with upstream's IPv6 fixtures, so every ip6 rule shape is traced.
import { makeTestEndpointSlice, makeTestService, newFakeProxier, TEST_NODE_IPS, TEST_NODE_IPV6, TEST_NODE_NAME } from '../testing/fake-proxier.js';
import { runPacketFlows } from '../testing/packet-flow.js';

describe('nftables packet flows, IPv6', () => {
  it('balances, masquerades, guards by source range, rejects without endpoints and drops unallocated addresses', async () => {
    const { proxier, nft } = newFakeProxier('IPv6');
    proxier.onServiceAdd(
      makeTestService('ns1', 'svc1', (s) => {
        Object.assign(s.spec, {
          type: 'LoadBalancer',
          clusterIP: 'fd00:10:96::41',
          ipFamilies: ['IPv6'],
          ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }],
          loadBalancerSourceRanges: ['2001:db8:100::/64'],
        });
        s.status.loadBalancer = { ingress: [{ ip: '2001:db8:200::4' }] };
      }),
    );
    proxier.onServiceAdd(makeTestService('ns2', 'svc2', (s) => Object.assign(s.spec, { clusterIP: 'fd00:10:96::42', ipFamilies: ['IPv6'], ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] })));
    proxier.onEndpointSliceAdd(
      makeTestEndpointSlice('ns1', 'svc1', 1, (eps) => {
        eps.addressType = 'IPv6';
        eps.endpoints = [{ addresses: ['fd00:10:180::1'], nodeName: TEST_NODE_NAME }, { addresses: ['fd00:10:180::2:1'] }];
        eps.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      }),
    );
    // A single-endpoint Service: kubernetes PR #140723 writes no map, and #140960 the form nft accepts for IPv6.
    proxier.onServiceAdd(makeTestService('ns3', 'svc3', (s) => Object.assign(s.spec, { clusterIP: 'fd00:10:96::43', ipFamilies: ['IPv6'], ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] })));
    proxier.onEndpointSliceAdd(
      makeTestEndpointSlice('ns3', 'svc3', 1, (eps) => {
        eps.addressType = 'IPv6';
        eps.endpoints = [{ addresses: ['fd00:10::3'], nodeName: TEST_NODE_NAME }];
        eps.ports = [{ name: 'p80', port: 8080, protocol: 'TCP' }];
      }),
    );
    await proxier.syncProxyRules();
    const dump = nft.table.dump();
    expect(dump).toContain('meta l4proto tcp dnat ip6 addr . port to numgen random mod 2 map { 0 : fd00:10:180::1 . 80 , 1 : fd00:10:180::2:1 . 80 }');
    expect(dump).toContain('meta l4proto tcp dnat to [fd00:10::3]:8080');
    expect(dump).toContain('add set ip6 kube-proxy hairpin-connections { type ipv6_addr . ipv6_addr . inet_proto . inet_service ; comment "service hairpin connections" ; }');
    expect(dump).toContain('add rule ip6 kube-proxy masquerading ct status dnat ip6 saddr . ip6 daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random');
    expect(dump).toContain('add rule ip6 kube-proxy services ip6 daddr @cluster-ips ip6 saddr != fd00:10::/64 mark set mark or 0x4000 comment "masquerade clusterIP traffic from outside cluster"');
    // Local endpoints only: fd00:10:180::2:1 is on another node.
    expect([...nft.table.elementsOf('hairpin-connections')!.keys()].sort()).toEqual(['fd00:10:180::1 . fd00:10:180::1 . tcp . 80', 'fd00:10::3 . fd00:10::3 . tcp . 8080']);
    expect(nft.table.chainNames().some((c) => c.startsWith('endpoint-'))).toBe(false);
    const both = '[fd00:10:180::1]:80, [fd00:10:180::2:1]:80';
    const { got, want } = runPacketFlows(nft.table, TEST_NODE_IPS, [
      { name: 'pod to cluster IP', sourceIP: 'fd00:10::2', destIP: 'fd00:10:96::41', destPort: 80, output: both },
      { name: 'hairpin to cluster IP', sourceIP: 'fd00:10:180::1', destIP: 'fd00:10:96::41', destPort: 80, output: both, masq: true },
      { name: 'external to nodePort', sourceIP: '2600:5200::1', destIP: TEST_NODE_IPV6, destPort: 3001, output: both, masq: true },
      { name: 'allowed external to LB', sourceIP: '2001:db8:100::7', destIP: '2001:db8:200::4', destPort: 80, output: both, masq: true },
      { name: 'blocked external to LB', sourceIP: '2600:5200::1', destIP: '2001:db8:200::4', destPort: 80, output: 'DROP' },
      { name: 'pod to cluster IP with no endpoints', sourceIP: 'fd00:10::2', destIP: 'fd00:10:96::42', destPort: 80, output: 'REJECT' },
      { name: 'pod to a wrong port of a cluster IP', sourceIP: 'fd00:10::2', destIP: 'fd00:10:96::41', destPort: 81, output: 'REJECT' },
      { name: 'packet to unallocated cluster IP', sourceIP: 'fd00:10::2', destIP: 'fd00:10:96::50', destPort: 80, output: 'DROP' },
      { name: 'pod to single-endpoint cluster IP', sourceIP: 'fd00:10::2', destIP: 'fd00:10:96::43', destPort: 80, output: '[fd00:10::3]:8080' },
      // A pod (inside the pod CIDR, so not marked by the cluster-IP rule) reaching itself: masqueraded by hairpin-connections.
      { name: 'single-endpoint hairpin', sourceIP: 'fd00:10::3', destIP: 'fd00:10:96::43', destPort: 80, output: '[fd00:10::3]:8080', masq: true },
    ]);
    expect(got).toEqual(want);
  });
});
