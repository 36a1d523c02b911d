/**
 * Upstream's TestTracePacket (kubernetes pkg/proxy/iptables/proxier_test.go): its own static rules,
 * verbatim, traced with its seven flows through the production ModeTracer (the one `kube-proxy
 * trace` uses), not through a test tracer. Upstream's expected answers are restated in the PacketTrace
 * contract's terms: an output "IP:PORT, …" is a DNAT to exactly those endpoints, "DROP"/"REJECT" the
 * verdict, "ACCEPT" an explicit filter accept, "" no Service rule (ACCEPT, unchanged).
 */
import type { PacketTrace, RuleSnapshot, TraceNode, TracePacket } from '@kube-proxy/core';
import { traceWords } from '@kube-proxy/core';
import { parseIptablesSave } from '@kube-proxy/netfilter-iptables';
import { iptablesSnapshot } from './iptables-snapshot.js';
import { iptablesTracer } from './iptables-tracer.js';
import { UPSTREAM_OVERALL_EXPECTED, upstreamOverallLiveSave } from './testing/upstream-overall-dump.js';
import { UPSTREAM_TRACE_PACKET_DUMP as UPSTREAM_TRACE_PACKET_RULES } from '@kube-proxy/netfilter-iptables/testing';

// testNodeIPs of upstream's proxier_test.go.
const NODE: TraceNode = { name: 'test-node', addresses: ['192.168.0.2', '192.168.1.2', '192.168.99.11', '2001:db8::1', '2001:db8:1::2'] };
const TEST_NODE_IP = '192.168.0.2';
const TEST_EXTERNAL_CLIENT = '203.0.113.2';

const tables = parseIptablesSave(UPSTREAM_TRACE_PACKET_RULES);
const snapshot = iptablesSnapshot(tables, 'IPv4', "upstream's TestTracePacket rules");

function trace(sourceIP: string, destIP: string, destPort: number, rules: RuleSnapshot = snapshot): PacketTrace {
  const packet: TracePacket = {
    family: 'IPv4',
    protocol: 'TCP',
    sourceIP,
    destIP,
    destPort,
    locallyGenerated: NODE.addresses.includes(sourceIP),
  };
  return iptablesTracer.trace(rules, packet, NODE);
}

/** Upstream's "output" of a trace (see the header). */
function upstreamOutput(t: PacketTrace): string {
  if (t.verdict === 'DNAT') return t.endpoints.join(', ');
  if (t.verdict === 'DROP' || t.verdict === 'REJECT') return t.verdict;
  return t.reason.startsWith('accepted by filter/') ? 'ACCEPT' : '';
}

interface Flow {
  name: string;
  sourceIP: string;
  destIP: string;
  destPort: number;
  output: string;
  masq?: boolean;
}

// Upstream's runPacketFlowTests cases of TestTracePacket, in upstream's order and words.
const FLOWS: Flow[] = [
  { name: 'no match', sourceIP: '10.0.0.2', destIP: '10.0.0.3', destPort: 80, output: '' },
  { name: 'single endpoint', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80' },
  { name: 'multiple endpoints', sourceIP: '10.0.0.2', destIP: '172.30.0.44', destPort: 80, output: '10.180.0.4:80, 10.180.0.5:80' },
  { name: 'LOCAL, KUBE-MARK-MASQ', sourceIP: TEST_NODE_IP, destIP: '192.168.99.22', destPort: 80, output: '10.180.0.2:80', masq: true },
  { name: 'DROP', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.22', destPort: 80, output: 'DROP' },
  { name: 'ACCEPT (NodePortHealthCheck)', sourceIP: TEST_NODE_IP, destIP: TEST_NODE_IP, destPort: 30000, output: 'ACCEPT' },
  { name: 'REJECT', sourceIP: '10.0.0.2', destIP: '172.30.0.46', destPort: 80, output: 'REJECT' },
];

describe("upstream's TestTracePacket rules through the iptables ModeTracer", () => {
  it('parses every line of the verbatim rules (none skipped)', () => {
    expect(tables.skippedLines).toEqual([]);
    expect(tables.tables.get('nat')?.chains.get('KUBE-SERVICES')?.rules).toHaveLength(10);
    expect(tables.tables.get('filter')?.chains.get('FORWARD')?.rules).toHaveLength(3);
  });

  it.each(FLOWS)('$name: $sourceIP -> $destIP:$destPort gives "$output"', (flow) => {
    const t = trace(flow.sourceIP, flow.destIP, flow.destPort);
    expect({ output: upstreamOutput(t), masq: t.masquerade }).toEqual({ output: flow.output, masq: flow.masq ?? false });
    // The contract's own invariants on the same answer.
    if (t.verdict !== 'DNAT') expect(t.endpoints).toEqual([]);
    expect([...t.endpoints]).toEqual([...t.endpoints].sort());
  });

  it('names the Service and the reason in Kubernetes terms', () => {
    expect(trace('10.0.0.2', '10.0.0.3', 80)).toEqual(expect.objectContaining({ verdict: 'ACCEPT', service: null }));
    expect(trace('10.0.0.2', '172.30.0.44', 80)).toEqual(
      expect.objectContaining({
        service: 'ns4/svc4:p80',
        choices: [
          { endpoint: '10.180.0.4:80', probability: 0.5 },
          { endpoint: '10.180.0.5:80', probability: 0.5 },
        ],
        reason: traceWords.sentTo('ns4/svc4:p80', 2),
      }),
    );
    expect(trace(TEST_NODE_IP, '192.168.99.22', 80).masqueradeReason).toBe(traceWords.masqueradeLocalSource);
    const drop = trace(TEST_EXTERNAL_CLIENT, '192.168.99.22', 80);
    expect(drop).toEqual(expect.objectContaining({ service: 'ns2/svc2:p80', reason: traceWords.noLocalEndpoints('ns2/svc2:p80', 'test-node') }));
    expect(drop.path.at(-1)?.where).toBe('filter/KUBE-EXTERNAL-SERVICES');
    const accept = trace(TEST_NODE_IP, TEST_NODE_IP, 30000);
    expect(accept.service).toBe('ns2/svc2:p80');
    expect(accept.path.at(-1)?.where).toBe('filter/KUBE-NODEPORTS');
    expect(trace('10.0.0.2', '172.30.0.46', 80)).toEqual(
      expect.objectContaining({ service: 'ns6/svc6:p80', reason: traceWords.noEndpoints('ns6/svc6:p80') }),
    );
  });

  it("follows the built-in chains' jump rules despite their unquoted multi-word comments", () => {
    const t = trace(TEST_EXTERNAL_CLIENT, '192.168.99.22', 80);
    expect(t.path.map((s) => s.where)).toEqual(expect.arrayContaining(['nat/PREROUTING', 'filter/FORWARD']));
    expect(t.path.find((s) => s.where === 'filter/FORWARD')?.rule).toContain('-j KUBE-');
  });
});

/*
 * TestTracePacket's services are TestOverallIPTablesRules' (same chains, same hashes); upstream's
 * expected dump of the latter differs only where the flows do not look (svc5's affinity, the
 * localhost NodePort and nfacct rules). The same seven flows must give the same answers over it, as
 * the bare iptables-restore payload upstream expects (the proxier's jump rules added) and as a live
 * node's iptables-save of either variant prints it (docker's rules beside upstream's).
 */
describe("upstream's TestTracePacket flows over upstream's TestOverallIPTablesRules dump", () => {
  const live = (variant: string): RuleSnapshot =>
    iptablesSnapshot(
      parseIptablesSave(upstreamOverallLiveSave('nat', variant) + upstreamOverallLiveSave('filter', variant)),
      'IPv4',
      `iptables-save (${variant})`,
    );
  const sources: Array<[string, RuleSnapshot]> = [
    ['the iptables-restore payload', iptablesTracer.fromDryRun(UPSTREAM_OVERALL_EXPECTED, 'IPv4')],
    ['iptables-save (nf_tables)', live('nf_tables')],
    ['iptables-save (legacy)', live('legacy')],
  ];
  describe.each(sources)('%s', (_name, rules) => {
    it.each(FLOWS)('$name', (flow) => {
      const t = trace(flow.sourceIP, flow.destIP, flow.destPort, rules);
      expect({ output: upstreamOutput(t), masq: t.masquerade }).toEqual({ output: flow.output, masq: flow.masq ?? false });
    });
  });
});
