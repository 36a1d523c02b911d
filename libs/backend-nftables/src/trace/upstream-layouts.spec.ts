// Tables written by upstream's kube-proxy — its own expected dumps — traced with upstream's own flows
// (TestTracePacketV4 / TestTracePacketV6 in pkg/proxy/nftables/helpers_test.go), each both as the
// `nft -f` script and as nft 1.0.6 lists it once loaded into a kernel (the *.listing.nft fixtures).
// The v1.36+ layout is traced from upstream's verbatim dumps (TestOverallNFTablesRules and a
// TestSyncProxyRulesRepeated step at edca5633) and from a hand-composed table kept beside them.
import { readFileSync } from 'node:fs';
import type { IPFamily, PacketTrace, RuleSnapshot } from '@kube-proxy/core';
import { TEST_EXTERNAL_CLIENT, TEST_EXTERNAL_CLIENT_BLOCKED, TEST_NODE_IP, TEST_NODE_IPS, TEST_NODE_IPV6 } from '../testing/fake-proxier.js';
import { nftablesTracer } from './nftables-tracer.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const NODE = { name: 'test-node', addresses: [...TEST_NODE_IPS] };

interface Flow {
  readonly name: string;
  readonly sourceIP: string;
  readonly destIP: string;
  readonly destPort: number;
  readonly output: string;
  readonly masq?: boolean;
}

function both(base: string, family: IPFamily): Array<[string, RuleSnapshot]> {
  return [
    [`${base} script`, nftablesTracer.fromDryRun(fixture(`${base}.nft`), family)],
    [`${base} listing`, nftablesTracer.fromDryRun(fixture(`${base}.listing.nft`), family)],
  ];
}

function traceFlow(snapshot: RuleSnapshot, f: Flow, node = NODE, locallyGenerated = node.addresses.includes(f.sourceIP)): PacketTrace {
  return nftablesTracer.trace(snapshot, { family: f.destIP.includes(':') ? 'IPv6' : 'IPv4', protocol: 'TCP', sourceIP: f.sourceIP, destIP: f.destIP, destPort: f.destPort, locallyGenerated }, node);
}

/** Upstream's `output` spelling: endpoints in rule order, REJECT, DROP, or "". */
function output(t: PacketTrace): string {
  if (t.verdict === 'DNAT') return t.choices.map((c) => c.endpoint).join(', ');
  return t.verdict === 'ACCEPT' ? '' : t.verdict;
}

/** `upstreamPath`: trace every flow on the PREROUTING path, as upstream's tracer does whatever the source. */
function expectFlows(snapshot: RuleSnapshot, flows: readonly Flow[], upstreamPath = false): void {
  const got = flows.map((f) => {
    const t = upstreamPath ? traceFlow(snapshot, f, NODE, false) : traceFlow(snapshot, f);
    return { name: f.name, output: output(t), masq: t.masquerade, unknown: t.path.filter((s) => s.note?.startsWith('not understood')).map((s) => s.rule) };
  });
  expect(got).toEqual(flows.map((f) => ({ name: f.name, output: f.output, masq: f.masq ?? false, unknown: [] })));
}

describe.each(both('upstream-v1.29', 'IPv4'))('upstream v1.29 layout (TestTracePacketV4), %s', (_name, snapshot) => {
  it("gives upstream's answer for every upstream flow", () => {
    expectFlows(snapshot, [
      { name: 'no match', sourceIP: '10.0.0.2', destIP: '10.0.0.3', destPort: 80, output: '' },
      { name: 'single endpoint', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80' },
      { name: 'multiple endpoints', sourceIP: '10.0.0.2', destIP: '172.30.0.44', destPort: 80, output: '10.180.0.4:80, 10.180.0.5:80' },
      { name: 'local, mark for masquerade', sourceIP: TEST_NODE_IP, destIP: '192.168.99.22', destPort: 80, output: '10.180.0.2:80', masq: true },
      { name: 'DROP', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.22', destPort: 80, output: 'DROP' },
      { name: 'REJECT', sourceIP: '10.0.0.2', destIP: '172.30.0.46', destPort: 80, output: 'REJECT' },
      { name: 'blocked external to loadbalancer IP', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: '5.6.7.8', destPort: 80, output: 'DROP' },
      { name: 'pod to nodePort', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.2:80' },
    ], true);
  });

  it('drops the node\'s own connection to a Local-policy external IP: v1.29 checked endpoints in filter-output before nat-output DNAT', () => {
    // Upstream's tracer runs every flow through prerouting; on the OUTPUT path the kernel meets
    // filter-output (priority -110) first, whose endpoints-check drops by the no-endpoint-services
    // element — the v1.29 behaviour that later layouts moved after DNAT (filter-output-post-dnat).
    const t = traceFlow(snapshot, { name: '', sourceIP: TEST_NODE_IP, destIP: '192.168.99.22', destPort: 80, output: '' });
    expect(t).toMatchObject({ verdict: 'DROP', service: 'ns2/svc2:p80' });
    expect(t.path[0]).toMatchObject({ where: 'ip kube-proxy/filter-output', rule: 'ct state new jump endpoints-check' });
  });

  it('explains the drops and rejects in Kubernetes terms, with the Service from the element comments', () => {
    expect(traceFlow(snapshot, { name: '', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.22', destPort: 80, output: '' })).toMatchObject({
      verdict: 'DROP',
      service: 'ns2/svc2:p80',
      reason: 'externalTrafficPolicy Local and no local endpoint of ns2/svc2:p80 on test-node',
    });
    expect(traceFlow(snapshot, { name: '', sourceIP: '10.0.0.2', destIP: '172.30.0.46', destPort: 80, output: '' })).toMatchObject({
      verdict: 'REJECT',
      service: 'ns6/svc6:p80',
      reason: 'service ns6/svc6 has no ready endpoints for port ns6/svc6:p80',
    });
    expect(traceFlow(snapshot, { name: '', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: '5.6.7.8', destPort: 80, output: '' })).toMatchObject({
      verdict: 'DROP',
      service: 'ns5/svc5:p80',
      reason: 'source 203.0.113.130 is outside loadBalancerSourceRanges of ns5/svc5:p80',
    });
  });

  it('masquerades off-cluster sources of a cluster IP and names why; notes ClientIP affinity', () => {
    const t = traceFlow(snapshot, { name: '', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '172.30.0.45', destPort: 80, output: '' });
    expect(t).toMatchObject({ verdict: 'DNAT', endpoints: ['10.180.0.3:80'], masquerade: true, masqueradeReason: 'traffic to a cluster IP from outside the cluster CIDR is masqueraded', service: 'ns5/svc5:p80' });
    expect(t.path.some((s) => s.note?.startsWith('session affinity'))).toBe(true);
  });

  it('names the kernel objects of a Service', () => {
    expect(nftablesTracer.objectsOf(snapshot, 'ns5/svc5').map((o) => `${o.kind} ${o.name} ${o.rules}`).sort()).toEqual([
      'chain ip kube-proxy/endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 3',
      'chain ip kube-proxy/external-HVFWP5L3-ns5/svc5/tcp/p80 2',
      'chain ip kube-proxy/firewall-HVFWP5L3-ns5/svc5/tcp/p80 1',
      'chain ip kube-proxy/service-HVFWP5L3-ns5/svc5/tcp/p80 3',
      'map element ip kube-proxy map firewall-ips element 5.6.7.8 . tcp . 80 1',
      'map element ip kube-proxy map service-ips element 172.30.0.45 . tcp . 80 1',
      'map element ip kube-proxy map service-ips element 5.6.7.8 . tcp . 80 1',
      'map element ip kube-proxy map service-nodeports element tcp . 3002 1',
      'set ip kube-proxy/affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 0',
    ]);
  });
});

describe.each(both('upstream-v1.33', 'IPv4'))('upstream v1.33-v1.35 layout (TestOverallNFTablesRules), %s', (_name, snapshot) => {
  // The same Services as TestTracePacketV4; this layout checks endpoints after DNAT, so the node's
  // own connections take the OUTPUT path and still get upstream's answer.
  it("gives upstream's answer for every TestTracePacketV4 flow, the node's own on the OUTPUT path", () => {
    expectFlows(snapshot, [
      { name: 'no match', sourceIP: '10.0.0.2', destIP: '10.0.0.3', destPort: 80, output: '' },
      { name: 'single endpoint', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80' },
      { name: 'multiple endpoints', sourceIP: '10.0.0.2', destIP: '172.30.0.44', destPort: 80, output: '10.180.0.4:80, 10.180.0.5:80' },
      { name: 'local, mark for masquerade', sourceIP: TEST_NODE_IP, destIP: '192.168.99.22', destPort: 80, output: '10.180.0.2:80', masq: true },
      { name: 'DROP', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.22', destPort: 80, output: 'DROP' },
      { name: 'REJECT', sourceIP: '10.0.0.2', destIP: '172.30.0.46', destPort: 80, output: 'REJECT' },
      { name: 'blocked external to loadbalancer IP', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: '5.6.7.8', destPort: 80, output: 'DROP' },
      { name: 'pod to nodePort', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.2:80' },
      { name: 'hairpin masquerades', sourceIP: '10.180.0.4', destIP: '172.30.0.44', destPort: 80, output: '10.180.0.4:80, 10.180.0.5:80', masq: true },
      { name: 'unused port of a cluster IP', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 81, output: 'REJECT' },
      { name: 'unallocated cluster IP', sourceIP: '10.0.0.2', destIP: '172.30.0.99', destPort: 80, output: 'DROP' },
    ]);
  });

  it('gives each endpoint of a two-endpoint Service probability 1/2 and masquerades only the hairpin branch', () => {
    const t = traceFlow(snapshot, { name: '', sourceIP: '10.180.0.4', destIP: '172.30.0.44', destPort: 80, output: '' });
    expect(t.choices).toEqual([
      { endpoint: '10.180.0.4:80', probability: 0.5 },
      { endpoint: '10.180.0.5:80', probability: 0.5 },
    ]);
    expect(t.masqueradeReason).toBe('a pod reaching itself through the Service (hairpin) is masqueraded');
  });
});

describe.each(both('upstream-v1.36-overall', 'IPv4'))("upstream v1.36+ layout, verbatim (TestOverallNFTablesRules at edca5633), %s", (_name, snapshot) => {
  // Upstream gives no flows for this test; its Services are TestTracePacketV4's, so these are that
  // test's flows, plus flows derived from the test's Services so that every Service (and every
  // address of it) is reached: svc3's NodePort, svc4's external IP, svc5's cluster IP under ClientIP
  // affinity, svc2's load-balancer IP, and the hairpin entries of svc1/svc3/svc4.
  it("gives upstream's answer for every TestTracePacketV4 flow, the node's own on the OUTPUT path", () => {
    expectFlows(snapshot, [
      { name: 'no match', sourceIP: '10.0.0.2', destIP: '10.0.0.3', destPort: 80, output: '' },
      { name: 'single endpoint', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80' },
      { name: 'multiple endpoints', sourceIP: '10.0.0.2', destIP: '172.30.0.44', destPort: 80, output: '10.180.0.4:80, 10.180.0.5:80' },
      { name: 'local, mark for masquerade', sourceIP: TEST_NODE_IP, destIP: '192.168.99.22', destPort: 80, output: '10.180.0.2:80', masq: true },
      { name: 'DROP', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.22', destPort: 80, output: 'DROP' },
      { name: 'REJECT', sourceIP: '10.0.0.2', destIP: '172.30.0.46', destPort: 80, output: 'REJECT' },
      { name: 'blocked external to loadbalancer IP', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: '5.6.7.8', destPort: 80, output: 'DROP' },
      { name: 'pod to nodePort', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.2:80' },
    ]);
  });

  it('reaches every Service of the test at every address it answers on (derived flows)', () => {
    expectFlows(snapshot, [
      { name: 'svc2: pod to cluster IP of a Local service reaches the remote endpoint', sourceIP: '10.0.0.2', destIP: '172.30.0.42', destPort: 80, output: '10.180.0.2:80' },
      { name: 'svc2: pod to LB IP short-circuits to the cluster endpoints', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: '10.180.0.2:80' },
      { name: 'svc2: external to LB IP, no local endpoint', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'DROP' },
      { name: 'svc2: external to NodePort, no local endpoint', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: 'DROP' },
      { name: 'svc3: cluster IP', sourceIP: '10.0.0.2', destIP: '172.30.0.43', destPort: 80, output: '10.180.0.3:80' },
      { name: 'svc3: external to NodePort masquerades', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3003, output: '10.180.0.3:80', masq: true },
      { name: 'svc4: external to external IP masquerades', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.33', destPort: 80, output: '10.180.0.4:80, 10.180.0.5:80', masq: true },
      { name: 'svc5: pod to cluster IP under affinity', sourceIP: '10.0.0.2', destIP: '172.30.0.45', destPort: 80, output: '10.180.0.3:80' },
      { name: 'svc5: off-cluster source to cluster IP masquerades', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '172.30.0.45', destPort: 80, output: '10.180.0.3:80', masq: true },
      { name: 'svc5: allowed external to LB IP masquerades', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '5.6.7.8', destPort: 80, output: '10.180.0.3:80', masq: true },
      { name: 'svc5: external to NodePort bypasses source ranges', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: TEST_NODE_IP, destPort: 3002, output: '10.180.0.3:80', masq: true },
      { name: 'svc1: hairpin masquerades', sourceIP: '10.180.0.1', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: true },
      { name: 'svc3: hairpin masquerades', sourceIP: '10.180.0.3', destIP: '172.30.0.43', destPort: 80, output: '10.180.0.3:80', masq: true },
      { name: 'svc4: hairpin masquerades (10.180.0.5 only is in the set)', sourceIP: '10.180.0.5', destIP: '172.30.0.44', destPort: 80, output: '10.180.0.4:80, 10.180.0.5:80', masq: true },
      { name: 'svc5: hairpin through the endpoint chain (set entry of svc3)', sourceIP: '10.180.0.3', destIP: '172.30.0.45', destPort: 80, output: '10.180.0.3:80', masq: true },
      { name: 'unused port of a cluster IP', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 81, output: 'REJECT' },
      { name: 'unallocated cluster IP', sourceIP: '10.0.0.2', destIP: '172.30.0.99', destPort: 80, output: 'DROP' },
    ]);
  });

  it('DNATs through the numgen map, 1/2 per endpoint, and names the Service from the chain and element comments', () => {
    const t = traceFlow(snapshot, { name: '', sourceIP: '10.0.0.2', destIP: '172.30.0.44', destPort: 80, output: '' });
    expect(t).toMatchObject({ verdict: 'DNAT', service: 'ns4/svc4:p80', endpoints: ['10.180.0.4:80', '10.180.0.5:80'], masquerade: false });
    expect(t.choices).toEqual([
      { endpoint: '10.180.0.4:80', probability: 0.5 },
      { endpoint: '10.180.0.5:80', probability: 0.5 },
    ]);
    expect(traceFlow(snapshot, { name: '', sourceIP: '10.0.0.2', destIP: '172.30.0.46', destPort: 80, output: '' })).toMatchObject({ verdict: 'REJECT', service: 'ns6/svc6:p80', reason: 'service ns6/svc6 has no ready endpoints for port ns6/svc6:p80' });
    expect(traceFlow(snapshot, { name: '', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '' })).toMatchObject({ verdict: 'DROP', service: 'ns2/svc2:p80', reason: 'externalTrafficPolicy Local and no local endpoint of ns2/svc2:p80 on test-node' });
  });

  it('says why each masquerade happens: hairpin set, inline marks', () => {
    const why = (sourceIP: string, destIP: string, destPort: number) => traceFlow(snapshot, { name: '', sourceIP, destIP, destPort, output: '' }).masqueradeReason;
    expect(why('10.180.0.1', '172.30.0.41', 80)).toBe('a pod reaching itself through the Service (hairpin) is masqueraded');
    expect(why(TEST_EXTERNAL_CLIENT, '172.30.0.41', 80)).toBe('traffic to a cluster IP from outside the cluster CIDR is masqueraded');
    expect(why(TEST_EXTERNAL_CLIENT, TEST_NODE_IP, 3003)).toBe('external traffic under externalTrafficPolicy Cluster is masqueraded');
  });

  it('names the kernel objects of a Service, the DNAT map endpoints included', () => {
    expect(nftablesTracer.objectsOf(snapshot, 'ns4/svc4').map((o) => `${o.kind} ${o.name} ${o.rules} ${(o.endpoints ?? []).join(',')}`).sort()).toEqual([
      'chain ip kube-proxy/external-LAUZTJTB-ns4/svc4/tcp/p80 2 ',
      'chain ip kube-proxy/service-LAUZTJTB-ns4/svc4/tcp/p80 1 10.180.0.4:80,10.180.0.5:80',
      'map element ip kube-proxy map service-ips element 172.30.0.44 . tcp . 80 1 ',
      'map element ip kube-proxy map service-ips element 192.168.99.33 . tcp . 80 1 ',
    ]);
  });
});

describe.each(both('upstream-v1.36-repeated', 'IPv4'))('upstream v1.36+ layout, verbatim (TestSyncProxyRulesRepeated, endpoints emptied), %s', (_name, snapshot) => {
  // Upstream traces no flows over this step; these are derived from its Services (svc1 and svc4
  // with one endpoint each, svc3 emptied, svc2 deleted earlier).
  it('reaches the Services that have endpoints, rejects the emptied one past its flushed chain, drops the deleted one', () => {
    expectFlows(snapshot, [
      { name: 'svc1 cluster IP', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.0.1.1:80' },
      { name: 'svc1 hairpin', sourceIP: '10.0.1.1', destIP: '172.30.0.41', destPort: 80, output: '10.0.1.1:80', masq: true },
      { name: 'svc4 from the node', sourceIP: TEST_NODE_IP, destIP: '172.30.0.44', destPort: 80, output: '10.0.4.1:80', masq: true },
      { name: 'svc3 without endpoints', sourceIP: '10.0.0.2', destIP: '172.30.0.43', destPort: 80, output: 'REJECT' },
      { name: 'svc2, deleted', sourceIP: '10.0.0.2', destIP: '172.30.0.42', destPort: 8080, output: 'DROP' },
    ]);
    expect(traceFlow(snapshot, { name: '', sourceIP: '10.0.0.2', destIP: '172.30.0.43', destPort: 80, output: '' })).toMatchObject({ service: 'ns3/svc3:p80', reason: 'service ns3/svc3 has no ready endpoints for port ns3/svc3:p80' });
  });
});

describe.each(both('upstream-v1.31-ipv6', 'IPv6'))('upstream v1.31 layout, IPv6 (TestTracePacketV6), %s', (_name, snapshot) => {
  const output6 = '[fd00:10:180::1]:80, [fd00:10:180::2:1]:80';
  it("gives upstream's answer for every upstream flow", () => {
    expectFlows(snapshot, [
      { name: 'pod to cluster IP', sourceIP: 'fd00:10::2', destIP: 'fd00:172:30::41', destPort: 80, output: output6 },
      { name: 'external to nodePort', sourceIP: '2600:5200::1', destIP: TEST_NODE_IPV6, destPort: 3001, output: output6, masq: true },
      { name: 'node to nodePort', sourceIP: TEST_NODE_IPV6, destIP: TEST_NODE_IPV6, destPort: 3001, output: output6, masq: true },
    ]);
  });

  it('spells IPv6 endpoints [IP]:PORT, sorted, each with probability 1/2', () => {
    const t = traceFlow(snapshot, { name: '', sourceIP: 'fd00:10::2', destIP: 'fd00:172:30::41', destPort: 80, output: '' });
    expect(t.endpoints).toEqual(['[fd00:10:180::1]:80', '[fd00:10:180::2:1]:80']);
    expect(t.choices).toEqual([
      { endpoint: '[fd00:10:180::1]:80', probability: 0.5 },
      { endpoint: '[fd00:10:180::2:1]:80', probability: 0.5 },
    ]);
  });

  it('rejects an unused port of a cluster IP and drops an unallocated one (cluster-ips-check)', () => {
    expect(traceFlow(snapshot, { name: '', sourceIP: 'fd00:10::2', destIP: 'fd00:172:30::41', destPort: 81, output: '' })).toMatchObject({ verdict: 'REJECT', reason: 'cluster IP fd00:172:30::41 belongs to a Service, but not on TCP port 81' });
    expect(traceFlow(snapshot, { name: '', sourceIP: 'fd00:10::2', destIP: 'fd00:10:96::99', destPort: 80, output: '' })).toMatchObject({ verdict: 'DROP', reason: 'cluster IP fd00:10:96::99 is not allocated to any Service' });
  });
});

describe.each(both('upstream-v1.36', 'IPv4'))('upstream v1.36+ layout, hand-composed (inline mark, DNAT maps, hairpin set), %s', (_name, snapshot) => {
  const node = { name: 'pi', addresses: ['192.168.0.231'] };
  const trace = (sourceIP: string, destIP: string, destPort: number) => traceFlow(snapshot, { name: '', sourceIP, destIP, destPort, output: '' }, node);

  it('DNATs through the numgen map to every endpoint, 1/2 each, pods unmasqueraded', () => {
    const t = trace('10.244.0.9', '10.100.192.23', 80);
    expect(t).toMatchObject({ verdict: 'DNAT', service: 'kproxy-lab/backend-api:http', masquerade: false, endpoints: ['10.244.0.10:9898', '10.244.0.8:9898'] });
    expect(t.choices).toEqual([
      { endpoint: '10.244.0.10:9898', probability: 0.5 },
      { endpoint: '10.244.0.8:9898', probability: 0.5 },
    ]);
  });

  it('masquerades the hairpin branch only (hairpin-connections in postrouting)', () => {
    const t = trace('10.244.0.8', '10.100.192.23', 80);
    expect(t).toMatchObject({ verdict: 'DNAT', masquerade: true, masqueradeReason: 'a pod reaching itself through the Service (hairpin) is masqueraded' });
  });

  it('masquerades off-cluster clients by the inline mark', () => {
    expect(trace('192.0.2.5', '10.100.192.23', 80)).toMatchObject({ verdict: 'DNAT', masquerade: true, masqueradeReason: 'traffic to a cluster IP from outside the cluster CIDR is masqueraded' });
  });

  it('DNATs a single endpoint by a plain `dnat to` (our variant; upstream writes `mod 1 map`), and takes the OUTPUT path from the node', () => {
    const t = trace('192.168.0.231', '10.96.0.1', 443);
    expect(t).toMatchObject({ verdict: 'DNAT', endpoints: ['192.168.0.231:6443'], service: 'default/kubernetes:https', masquerade: true });
    expect(t.path[0]!.where).toBe('ip kube-proxy/filter-output-pre-dnat');
  });

  it('masquerades NodePort traffic from outside (external chain marks inline)', () => {
    expect(trace('192.0.2.5', '192.168.0.231', 30080)).toMatchObject({ verdict: 'DNAT', masquerade: true, masqueradeReason: 'external traffic under externalTrafficPolicy Cluster is masqueraded' });
  });

  it('rejects a Service without endpoints and drops unallocated cluster IPs', () => {
    expect(trace('10.244.0.9', '10.100.192.24', 80)).toMatchObject({ verdict: 'REJECT', service: 'kproxy-lab/idle:http' });
    expect(trace('10.244.0.9', '10.100.1.1', 80)).toMatchObject({ verdict: 'DROP', reason: 'cluster IP 10.100.1.1 is not allocated to any Service' });
  });

  it('names the DNAT map endpoints among the kernel objects', () => {
    expect(nftablesTracer.objectsOf(snapshot, 'kproxy-lab/backend-api')).toContainEqual({ kind: 'chain', name: 'ip kube-proxy/service-YVSKLJHA-kproxy-lab/backend-api/tcp/http', rules: 1, endpoints: ['10.244.0.10:9898', '10.244.0.8:9898'] });
  });
});
