// Per-service options, ported from upstream's pkg/proxy/nftables/proxier_test.go (and the parts of
// TestOverallNFTablesRules about them): session affinity, loadBalancerSourceRanges, ipMode Proxy,
// ServiceCIDR drops (TestProxier_OnServiceCIDRsChanged) and non-canonical addresses (TestBadIPs).
import type { MemoryNft } from '../kernel/memory-nft.js';
import { BASE_RULES } from '../testing/base-rules.js';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, normalizedLines, TEST_EXTERNAL_CLIENT, TEST_NODE_IP, TEST_NODE_IPS, TEST_NODE_NAME } from '../testing/fake-proxier.js';
import { runPacketFlows, type PacketFlowCase } from '../testing/packet-flow.js';

const P = 'ip kube-proxy';

function expectFlows(nft: MemoryNft, cases: readonly PacketFlowCase[]): void {
  const { got, want } = runPacketFlows(nft.table, TEST_NODE_IPS, cases);
  expect(got).toEqual(want);
}

const oneEndpoint = (ip = '10.180.0.1') =>
  makeTestEndpointSlice('ns1', 'svc1', 1, (eps) => {
    eps.addressType = 'IPv4';
    eps.endpoints = [{ addresses: [ip] }];
    eps.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
  });

describe('nftables service options', () => {
  // The svc5 part of upstream's TestOverallNFTablesRules: ClientIP affinity, as rules and as flows.
  it('keeps ClientIP affinity in one timed set per endpoint, looked up before the random pick', async () => {
    const { proxier, nft } = newFakeProxier();
    const withAffinity = (timeoutSeconds: number) =>
      makeTestService('ns1', 'svc1', (s) =>
        Object.assign(s.spec, { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }], sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds } } }),
      );
    const original = withAffinity(10800);
    proxier.onServiceAdd(original);
    proxier.onEndpointSliceAdd(
      makeTestEndpointSlice('ns1', 'svc1', 1, (eps) => {
        eps.addressType = 'IPv4';
        eps.endpoints = [{ addresses: ['10.180.0.1'] }, { addresses: ['10.180.0.2'] }];
        eps.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      }),
    );
    await proxier.syncProxyRules();
    const sets = nft.table.setNames().filter((n) => n.startsWith('affinity-'));
    expect(sets).toHaveLength(2);
    expect(nft.table.dump()).toContain(`add set ${P} ${sets[0]} { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }`);
    const svcChain = 'service-ULMVA6XW-ns1/svc1/tcp/p80';
    const rules = nft.table.rulesOf(svcChain)!;
    expect(rules.filter((r) => r.startsWith('ip saddr @affinity-'))).toHaveLength(2);
    expect(rules[rules.length - 1]).toMatch(/^numgen random mod 2 vmap/);
    // A first packet finds the sets empty and may go to either endpoint.
    expectFlows(nft, [{ name: 'pod to cluster IP', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80, 10.180.0.2:80' }]);

    // A changed timeout replaces the sets (nft cannot change a set's timeout in place).
    const txBefore = nft.transactions.length;
    proxier.onServiceUpdate(original, withAffinity(60));
    await proxier.syncProxyRules();
    expect(nft.transactions.length).toBe(txBefore + 1);
    // The chains naming the set are flushed before it is deleted, and it is re-added before they are refilled.
    const lines = nft.transactions[txBefore].lines;
    const at = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix));
    expect(at(`flush chain ${P} ${svcChain}`)).toBeLessThan(at(`delete set ${P} ${sets[0]}`));
    expect(at(`delete set ${P} ${sets[0]}`)).toBeLessThan(at(`add set ${P} ${sets[0]}`));
    expect(at(`add set ${P} ${sets[0]}`)).toBeLessThan(at(`add rule ${P} ${svcChain}`));
    expect(nft.table.dump()).toContain(`add set ${P} ${sets[0]} { type ipv4_addr ; flags dynamic,timeout ; timeout 60s ; }`);
    expectFlows(nft, [{ name: 'pod to cluster IP after the timeout change', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80, 10.180.0.2:80' }]);
  });

  // TestLoadBalancer covers ranges that include the node; this is the other side: the node outside.
  it('drops the node\'s own traffic to a load-balancer IP when the node is outside the source ranges', async () => {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(
      makeTestService('ns1', 'svc1', (s) => {
        Object.assign(s.spec, { type: 'LoadBalancer', clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }], loadBalancerSourceRanges: ['203.0.113.0/25'] });
        s.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
      }),
    );
    proxier.onEndpointSliceAdd(oneEndpoint());
    await proxier.syncProxyRules();
    expect(nft.table.rulesOf('firewall-ULMVA6XW-ns1/svc1/tcp/p80')).toEqual(['ip saddr != { 203.0.113.0/25 } drop']);
    expectFlows(nft, [
      { name: 'allowed external to LB', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.180.0.1:80', masq: true },
      { name: 'node to LB', sourceIP: TEST_NODE_IP, destIP: '1.2.3.4', destPort: 80, output: 'DROP' },
      { name: 'same node to LB, SNATted to LB (not allowed)', sourceIP: '1.2.3.4', destIP: '1.2.3.4', destPort: 80, output: 'DROP' },
    ]);
  });

  // Ports upstream's TestLoadBalancerIngressRouteTypeProxy.
  it.each([
    { name: 'ipMode Proxy', svcIP: '172.30.0.41', lbIP: '1.2.3.4', ipMode: 'Proxy', expected: false },
    { name: 'ipMode VIP', svcIP: '172.30.0.42', lbIP: '1.2.3.5', ipMode: 'VIP', expected: true },
    { name: 'ipMode nil', svcIP: '172.30.0.43', lbIP: '1.2.3.6', ipMode: undefined, expected: true },
  ])('serves a load-balancer IP only when the node sees it: $name', async ({ svcIP, lbIP, ipMode, expected }) => {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(
      makeTestService('ns1', 'svc1', (s) => {
        Object.assign(s.spec, { type: 'LoadBalancer', clusterIP: svcIP, ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }] });
        s.status.loadBalancer = { ingress: [{ ip: lbIP, ...(ipMode ? { ipMode } : {}) }] };
      }),
    );
    proxier.onEndpointSliceAdd(oneEndpoint());
    await proxier.syncProxyRules();
    expect(nft.table.elementsOf('service-ips')!.has(`${lbIP} . tcp . 80`)).toBe(expected);
  });

  // Ports upstream's TestProxier_OnServiceCIDRsChanged, and the drop rule it feeds (cluster-ips-check).
  it('drops traffic to unallocated addresses of this family\'s ServiceCIDRs, following their changes', async () => {
    const { proxier, nft } = newFakeProxier();
    await proxier.syncProxyRules();
    const unallocated: PacketFlowCase = { name: 'pod to an unallocated address of the second CIDR', sourceIP: '10.0.0.2', destIP: '172.50.0.7', destPort: 80, output: '' };
    expectFlows(nft, [unallocated]);

    proxier.onServiceCIDRsChanged(['172.30.0.0/16', '172.50.0.0/16', 'fd00:10:96::/112', 'fd00:172:30::/112']);
    await proxier.syncProxyRules();
    expect(nft.table.rulesOf('cluster-ips-check')).toContain('ip daddr { 172.30.0.0/16,172.50.0.0/16 } drop comment "Drop traffic to unallocated ClusterIPs"');
    expectFlows(nft, [{ ...unallocated, output: 'DROP' }]);
    // Only the cluster-ips-check chain was rewritten.
    const tx = nft.transactions[nft.transactions.length - 1];
    expect(tx.lines.every((l) => l.includes(' cluster-ips-check'))).toBe(true);

    const v6 = newFakeProxier('IPv6');
    v6.proxier.onServiceCIDRsChanged(['172.30.0.0/16', '172.50.0.0/16', 'fd00:10:96::/112', 'fd00:172:30::/112']);
    await v6.proxier.syncProxyRules();
    expect(v6.nft.table.rulesOf('cluster-ips-check')).toContain('ip6 daddr { fd00:10:96::/112,fd00:172:30::/112 } drop comment "Drop traffic to unallocated ClusterIPs"');
  });

  // Upstream v1.36+ marks off-cluster traffic to every cluster IP with one rule heading `services`.
  it.each([
    { name: 'a pod-CIDR detector', options: {}, rule: 'ip daddr @cluster-ips ip saddr != 10.0.0.0/8 mark set mark or 0x4000 comment "masquerade clusterIP traffic from outside cluster"' },
    { name: '--masquerade-all', options: { masqueradeAll: true }, rule: 'ip daddr @cluster-ips mark set mark or 0x4000 comment "masquerade clusterIP traffic from outside cluster"' },
    { name: 'no detector', options: { noLocalDetector: true }, rule: undefined },
  ])('heads services with the cluster-IP masquerade rule under $name', async ({ options, rule }) => {
    const { proxier, nft } = newFakeProxier('IPv4', options);
    proxier.onServiceAdd(makeTestService('ns1', 'svc1', (s) => Object.assign(s.spec, { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] })));
    proxier.onEndpointSliceAdd(oneEndpoint('10.180.0.1'));
    await proxier.syncProxyRules();
    const services = nft.table.rulesOf('services')!;
    if (rule) expect(services[0]).toBe(rule);
    expect(services.filter((r) => r.includes('@cluster-ips'))).toHaveLength(rule ? 1 : 0);
    // Never in the service chain itself any more.
    expect(nft.table.rulesOf('service-ULMVA6XW-ns1/svc1/tcp/p80')).toEqual(['meta l4proto tcp dnat to 10.180.0.1:80']);
  });

  // Partial syncs of an affinity Service: its endpoint chains and sets follow the endpoints, stale ones go a second later.
  it('keeps endpoint chains under ClientIP affinity, and retires a removed endpoint\'s chain and set', async () => {
    const { proxier, nft, clock } = newFakeProxier();
    proxier.onServiceAdd(
      makeTestService('ns1', 'svc1', (s) => Object.assign(s.spec, { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }], sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } })),
    );
    const slice = (ips: string[]) =>
      makeTestEndpointSlice('ns1', 'svc1', 1, (eps) => {
        eps.addressType = 'IPv4';
        eps.endpoints = ips.map((ip) => ({ addresses: [ip], nodeName: TEST_NODE_NAME }));
        eps.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      });
    const two = slice(['10.0.0.11', '10.0.0.12']);
    proxier.onEndpointSliceAdd(two);
    await proxier.syncProxyRules();
    const endpointChains = () => nft.table.chainNames().filter((c) => c.startsWith('endpoint-')).sort();
    const [e11, e12] = endpointChains();
    expect(e11).toContain('10.0.0.11/80');
    // An endpoint chain: the affinity update, then the DNAT (no hairpin rule: the set does that now).
    expect(nft.table.rulesOf(e11!)).toEqual([`update @${e11!.replace('endpoint-', 'affinity-')} { ip saddr }`, 'meta l4proto tcp dnat to 10.0.0.11:80']);
    expect([...nft.table.elementsOf('hairpin-connections')!.keys()].sort()).toEqual(['10.0.0.11 . 10.0.0.11 . tcp . 80', '10.0.0.12 . 10.0.0.12 . tcp . 80']);

    proxier.onEndpointSliceUpdate(two, slice(['10.0.0.11']));
    await proxier.syncProxyRules();
    // One endpoint left, with affinity: still a chain and a vmap (the plain DNAT is for Services without affinity).
    expect(nft.table.rulesOf('service-ULMVA6XW-ns1/svc1/tcp/p80')!.at(-1)).toBe(`numgen random mod 1 vmap { 0 : goto ${e11} }`);
    expect(nft.table.rulesOf(e12!)).toEqual([]);
    expect([...proxier.tableState.staleChains.keys()]).toEqual([e12]);
    expect([...nft.table.elementsOf('hairpin-connections')!.keys()]).toEqual(['10.0.0.11 . 10.0.0.11 . tcp . 80']);
    expect(nft.table.setNames()).not.toContain(e12!.replace('endpoint-', 'affinity-'));
    clock.advance(2000);
    await proxier.syncProxyRules();
    expect(endpointChains()).toEqual([e11]);
  });

  // Ports upstream's TestBadIPs: leading zeros in Service and EndpointSlice addresses are written canonically.
  it('writes non-canonical addresses of services and slices in canonical form', async () => {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(
      makeTestService('ns1', 'svc1', (s) => {
        Object.assign(s.spec, {
          type: 'LoadBalancer',
          clusterIP: '172.30.0.041',
          ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }],
          externalIPs: ['192.168.099.022'],
          loadBalancerSourceRanges: ['203.0.113.000/025'],
        });
        s.status.loadBalancer = { ingress: [{ ip: '1.2.3.004' }] };
      }),
    );
    proxier.onEndpointSliceAdd(oneEndpoint('10.180.00.001'));
    await proxier.syncProxyRules();
    const S = 'service-ULMVA6XW-ns1/svc1/tcp/p80';
    const X = 'external-ULMVA6XW-ns1/svc1/tcp/p80';
    const F = 'firewall-ULMVA6XW-ns1/svc1/tcp/p80';
    expect(normalizedLines(nft.table.dump())).toEqual(
      normalizedLines(
        BASE_RULES +
          [
            `add chain ${P} ${S}`,
            `add rule ${P} ${S} meta l4proto tcp dnat to 10.180.0.1:80`,
            `add chain ${P} ${X}`,
            `add rule ${P} ${X} mark set mark or 0x4000 comment "masquerade"`,
            `add rule ${P} ${X} goto ${S}`,
            `add chain ${P} ${F}`,
            `add rule ${P} ${F} ip saddr != { 203.0.113.0/25 } drop`,
            `add element ${P} cluster-ips { 172.30.0.41 }`,
            `add element ${P} service-ips { 172.30.0.41 . tcp . 80 : goto ${S} }`,
            `add element ${P} service-ips { 192.168.99.22 . tcp . 80 : goto ${X} }`,
            `add element ${P} service-ips { 1.2.3.4 . tcp . 80 : goto ${X} }`,
            `add element ${P} service-nodeports { tcp . 3001 : goto ${X} }`,
            `add element ${P} firewall-ips { 1.2.3.4 . tcp . 80 : goto ${F} }`,
          ].join('\n'),
      ),
    );
  });
});
