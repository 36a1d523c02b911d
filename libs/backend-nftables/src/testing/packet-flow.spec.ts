import { MemoryNftTable } from '../nft/memory-table.js';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, TEST_NODE_IPS, TEST_NODE_NAME } from './fake-proxier.js';
import { hostOf, tracePacket } from './packet-flow.js';
import { addressMatches } from './rule-matchers.js';

const P = 'ip kube-proxy';

/** A hand-written table with the base chains the tracer starts from. */
function table(extra: string[]): MemoryNftTable {
  const t = new MemoryNftTable('ip');
  t.run([
    `add table ${P} { comment "rules for kube-proxy" ; }`,
    `add chain ${P} filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }`,
    `add chain ${P} nat-prerouting { type nat hook prerouting priority -100 ; }`,
    `add chain ${P} filter-forward { type filter hook forward priority 0 ; }`,
    `add chain ${P} filter-input { type filter hook input priority 0 ; }`,
    ...extra,
  ]);
  return t;
}

const pkt = (sourceIP: string, destIP: string, destPort = 80, protocol = 'tcp') => ({ sourceIP, destIP, destPort, protocol });

describe('packet-flow tracer', () => {
  it('compares addresses canonically and CIDRs by containment, in both families', () => {
    expect(addressMatches('10.0.0.2', '10.0.0.0/8')).toBe(true);
    expect(addressMatches('11.0.0.2', '10.0.0.0/8')).toBe(false);
    expect(addressMatches('2001:db8::1', '2001:DB8:0::1')).toBe(true);
    expect(addressMatches('fd00:10::2', 'fd00:10::/64')).toBe(true);
    expect(() => addressMatches('10.0.0.1', 'bogus')).toThrow(/not an address/);
    expect(hostOf('[fd00::1]:80')).toBe('fd00::1');
    expect(hostOf('10.0.0.1:80')).toBe('10.0.0.1');
  });

  it('follows jump (and comes back) and goto (and leaves the chain), and stops at the first verdict', () => {
    const t = table([
      `add chain ${P} a`,
      `add chain ${P} b`,
      `add rule ${P} nat-prerouting jump a`,
      `add rule ${P} nat-prerouting ip daddr 10.9.9.9 drop`,
      `add rule ${P} a ip saddr != { 10.1.0.0/16 , 10.2.0.0/16 } goto b`,
      `add rule ${P} a reject`,
      `add rule ${P} b return`,
    ]);
    expect(tracePacket(t, pkt('10.1.0.1', '10.9.9.9'), []).output).toBe('REJECT');
    // goto b, return from b ends a as well: back in nat-prerouting, on to the drop.
    expect(tracePacket(t, pkt('10.3.0.1', '10.9.9.9'), []).output).toBe('DROP');
    expect(tracePacket(t, pkt('10.3.0.1', '10.9.9.8'), []).output).toBe('');
  });

  it('reads vmap verdicts, visits every numgen endpoint, records masquerade and routes by the DNATed address', () => {
    const t = table([
      `add map ${P} svc { type ipv4_addr . inet_proto . inet_service : verdict ; }`,
      `add chain ${P} s`,
      `add chain ${P} e1`,
      `add chain ${P} e2`,
      `add rule ${P} e1 ip saddr 10.0.0.1 mark set mark or 0x4000 comment "masquerade"`,
      `add rule ${P} e1 meta l4proto tcp dnat to 10.0.0.1:8080`,
      `add rule ${P} e2 meta l4proto tcp dnat to 10.0.0.2:8080`,
      `add rule ${P} s numgen random mod 2 vmap { 0 : goto e1 , 1 : goto e2 }`,
      `add rule ${P} nat-prerouting ip daddr . meta l4proto . th dport vmap @svc`,
      `add rule ${P} filter-forward ip daddr 10.0.0.1 reject comment "only when forwarded"`,
      `add element ${P} svc { 172.30.0.1 . tcp . 80 : goto s }`,
    ]);
    const r = tracePacket(t, pkt('10.0.0.1', '172.30.0.1'), []);
    // Forwarded to 10.0.0.1 after DNAT, so filter-forward's reject applies too (as the kernel would).
    expect(r).toMatchObject({ output: '10.0.0.1:8080, 10.0.0.2:8080, REJECT', masq: true });
    expect(tracePacket(t, pkt('10.0.0.9', '172.30.0.1', 80, 'udp'), []).output).toBe('');
    // Delivered locally when the endpoint is a node IP: filter-input, not filter-forward.
    expect(tracePacket(t, pkt('10.0.0.9', '172.30.0.1'), ['10.0.0.1'])).toMatchObject({ output: '10.0.0.1:8080, 10.0.0.2:8080', masq: false });
  });

  it('reads the DNAT map of a service without endpoint chains, and masquerades a hairpin connection by the set', () => {
    const t = table([
      `add map ${P} svc { type ipv4_addr . inet_proto . inet_service : verdict ; }`,
      `add set ${P} hairpin-connections { type ipv4_addr . ipv4_addr . inet_proto . inet_service ; }`,
      `add chain ${P} s`,
      `add rule ${P} s meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 8080 , 1 : 10.0.0.2 . 8080 }`,
      `add rule ${P} nat-prerouting ip daddr . meta l4proto . th dport vmap @svc`,
      `add element ${P} svc { 172.30.0.1 . tcp . 80 : goto s }`,
      `add element ${P} hairpin-connections { 10.0.0.1 . 10.0.0.1 . tcp . 8080 }`,
    ]);
    expect(tracePacket(t, pkt('10.0.0.9', '172.30.0.1'), [])).toMatchObject({ output: '10.0.0.1:8080, 10.0.0.2:8080', masq: false });
    // 10.0.0.1 reaching itself: source = destination after DNAT, in the set.
    expect(tracePacket(t, pkt('10.0.0.1', '172.30.0.1'), [])).toMatchObject({ output: '10.0.0.1:8080, 10.0.0.2:8080', masq: true });
    // 10.0.0.2 is not in the set (not a local endpoint): no hairpin masquerade.
    expect(tracePacket(t, pkt('10.0.0.2', '172.30.0.1'), [])).toMatchObject({ masq: false });
  });

  it('throws on a rule shape it does not know, rather than skipping it', () => {
    const t = table([`add rule ${P} nat-prerouting iifname "eth0" drop`]);
    expect(() => tracePacket(t, pkt('10.0.0.1', '10.0.0.2'), [])).toThrow(/does not understand "iifname/);
    const t2 = table([`add rule ${P} nat-prerouting numgen random mod 3 vmap { 0 : goto nat-prerouting }`]);
    expect(() => tracePacket(t2, pkt('10.0.0.1', '10.0.0.2'), [])).toThrow(/malformed endpoint vmap/);
  });

  it('understands every rule the proxier writes for a Local load balancer with source ranges and affinity', async () => {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(
      makeTestService('ns1', 'svc1', (s) => {
        Object.assign(s.spec, {
          type: 'LoadBalancer',
          externalTrafficPolicy: 'Local',
          clusterIP: '172.30.0.41',
          ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }],
          healthCheckNodePort: 30000,
          loadBalancerSourceRanges: ['203.0.113.0/25'],
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
        });
        s.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
      }),
    );
    proxier.onEndpointSliceAdd(
      makeTestEndpointSlice('ns1', 'svc1', 1, (e) => {
        e.addressType = 'IPv4';
        e.endpoints = [{ addresses: ['10.180.0.1'] }, { addresses: ['10.180.2.1'], nodeName: TEST_NODE_NAME }];
        e.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      }),
    );
    await proxier.syncProxyRules();
    const r = tracePacket(nft.table, pkt('203.0.113.2', '1.2.3.4'), TEST_NODE_IPS);
    expect(r).toMatchObject({ output: '10.180.2.1:80', masq: false });
    expect(r.matches.some((m) => m.startsWith('firewall-check: '))).toBe(true);
    expect(r.matches.some((m) => m.includes('update @affinity-'))).toBe(true);
    expect(tracePacket(nft.table, pkt('203.0.113.200', '1.2.3.4'), TEST_NODE_IPS).output).toBe('DROP');
  });
});
