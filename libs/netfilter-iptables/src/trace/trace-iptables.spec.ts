import type { TraceNode, TracePacket } from '@kube-proxy/core';
import { parseIptablesSave, savedChain } from './saved-tables.js';
import { traceIptables } from './trace-iptables.js';
import type { IptablesTrace } from './trace-types.js';
import { UPSTREAM_TRACE_PACKET_DUMP } from '../testing/upstream-trace-packet-dump.js';

const NODE_IP = '192.168.0.2';
const NODE: TraceNode = { name: 'test-node', addresses: [NODE_IP, '192.168.1.2', '192.168.99.11', '2001:db8::1', '2001:db8:1::2'] };

function packet(sourceIP: string, destIP: string, destPort: number, extra: Partial<TracePacket> = {}): TracePacket {
  return {
    family: destIP.includes(':') ? 'IPv6' : 'IPv4',
    protocol: 'TCP',
    sourceIP,
    destIP,
    destPort,
    locallyGenerated: NODE.addresses.includes(sourceIP),
    ...extra,
  };
}

/** Upstream's tracePacket output: DNAT destinations joined, or REJECT/DROP, or ACCEPT by a filter rule. */
function output(trace: IptablesTrace): string {
  if (trace.verdict === 'REJECT' || trace.verdict === 'DROP') return trace.verdict;
  if (trace.dnat.length > 0) return trace.dnat.map((d) => d.destination).join(', ');
  return trace.steps.some((s) => s.table === 'filter' && s.action === 'accept') ? 'ACCEPT' : '';
}

describe('traceIptables over upstream TestTracePacket rules (written by upstream)', () => {
  const tables = parseIptablesSave(UPSTREAM_TRACE_PACKET_DUMP);
  const flows: { name: string; source: string; dest: string; port: number; output: string; masq?: boolean }[] = [
    { name: 'no match', source: '10.0.0.2', dest: '10.0.0.3', port: 80, output: '' },
    { name: 'single endpoint', source: '10.0.0.2', dest: '172.30.0.41', port: 80, output: '10.180.0.1:80' },
    { name: 'multiple endpoints', source: '10.0.0.2', dest: '172.30.0.44', port: 80, output: '10.180.0.4:80, 10.180.0.5:80' },
    { name: 'LOCAL, KUBE-MARK-MASQ', source: NODE_IP, dest: '192.168.99.22', port: 80, output: '10.180.0.2:80', masq: true },
    { name: 'DROP', source: '203.0.113.2', dest: '192.168.99.22', port: 80, output: 'DROP' },
    { name: 'ACCEPT (NodePortHealthCheck)', source: NODE_IP, dest: NODE_IP, port: 30000, output: 'ACCEPT' },
    { name: 'REJECT', source: '10.0.0.2', dest: '172.30.0.46', port: 80, output: 'REJECT' },
  ];
  it.each(flows)('$name', (flow) => {
    const trace = traceIptables(tables, packet(flow.source, flow.dest, flow.port), NODE);
    expect(output(trace)).toBe(flow.output);
    expect(trace.masquerade).toBe(flow.masq ?? false);
  });

  it('parses unquoted comments of upstream fake dumps to the next option', () => {
    const rule = savedChain(tables, 'filter', 'INPUT')!.rules[0]!;
    expect(rule.comment).toBe('kubernetes health check service ports');
    expect(rule.target?.name).toBe('KUBE-NODEPORTS');
    expect(rule.unknown).toEqual([]);
  });

  it('records the path: jumps with comments, the masquerade rule, the DNAT, the hooks', () => {
    const trace = traceIptables(tables, packet(NODE_IP, '192.168.99.22', 80), NODE);
    expect(trace.natHook).toBe('OUTPUT');
    expect(trace.filterHooks).toEqual(['OUTPUT']);
    expect(trace.steps.map((s) => `${s.table}/${s.chain} ${s.action}${s.target ? ` ${s.target}` : ''}`)).toEqual([
      'nat/OUTPUT jump KUBE-SERVICES',
      'nat/KUBE-SERVICES jump KUBE-EXT-GNZBNJ2PO5MGZ6GT',
      'nat/KUBE-EXT-GNZBNJ2PO5MGZ6GT masquerade-mark KUBE-MARK-MASQ',
      'nat/KUBE-MARK-MASQ masquerade-mark',
      'nat/KUBE-EXT-GNZBNJ2PO5MGZ6GT jump KUBE-SVC-GNZBNJ2PO5MGZ6GT',
      'nat/KUBE-SVC-GNZBNJ2PO5MGZ6GT jump KUBE-SEP-RS4RBKLTHTF2IUXJ',
      'nat/KUBE-SEP-RS4RBKLTHTF2IUXJ dnat',
      'filter/OUTPUT jump KUBE-SERVICES',
    ]);
    expect(trace.masqueradeRule?.comment).toBe('masquerade LOCAL traffic for ns2/svc2:p80 external destinations');
    expect(trace.dnat).toEqual([
      expect.objectContaining({ destination: '10.180.0.2:80', probability: 1, chain: 'KUBE-SEP-RS4RBKLTHTF2IUXJ', comment: 'ns2/svc2:p80' }),
    ]);
    expect(trace.verdict).toBe('DNAT');
    expect(trace.decidedBy?.table).toBe('nat');
  });

  it('says which table decided a DROP and by which rule', () => {
    const trace = traceIptables(tables, packet('203.0.113.2', '192.168.99.22', 80), NODE);
    expect(trace.decidedBy).toEqual(expect.objectContaining({ table: 'filter', chain: 'KUBE-EXTERNAL-SERVICES', comment: 'ns2/svc2:p80 has no local endpoints' }));
    expect(trace.filterHooks).toEqual(['FORWARD']);
  });

  it('gives each branch of a probability jump its real chance', () => {
    const trace = traceIptables(tables, packet('10.0.0.2', '172.30.0.44', 80), NODE);
    expect(trace.dnat.map((d) => [d.destination, d.probability])).toEqual([
      ['10.180.0.4:80', 0.5],
      ['10.180.0.5:80', 0.5],
    ]);
  });
});

const THREE_ENDPOINTS = `
*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-A - [0:0]
:KUBE-SEP-1 - [0:0]
:KUBE-SEP-2 - [0:0]
:KUBE-SEP-3 - [0:0]
:KUBE-MARK-MASQ - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-A
-A KUBE-SVC-A ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-MARK-MASQ
-A KUBE-SVC-A -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -m statistic --mode random --probability 0.33333333349 -j KUBE-SEP-1
-A KUBE-SVC-A -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-2
-A KUBE-SVC-A -m comment --comment "kube-system/kube-dns:dns -> 10.244.1.4:53" -j KUBE-SEP-3
-A KUBE-SEP-1 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.2:53
-A KUBE-SEP-2 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.3:53
-A KUBE-SEP-3 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.1.4:53
COMMIT
`;

describe('traceIptables: the kernel path, as iptables-save prints it', () => {
  it('three endpoints: 1/3 each (p_i × Π(1−p_j)), and the masquerade by --set-xmark for an off-cluster source', () => {
    const trace = traceIptables(parseIptablesSave(THREE_ENDPOINTS), packet('203.0.113.9', '10.96.0.10', 53, { protocol: 'UDP' }), NODE);
    expect(trace.dnat.map((d) => d.destination)).toEqual(['10.244.0.2:53', '10.244.0.3:53', '10.244.1.4:53']);
    for (const d of trace.dnat) expect(d.probability).toBeCloseTo(1 / 3, 6);
    expect(trace.masquerade).toBe(true);
    expect(trace.masqueradeRule?.chain).toBe('KUBE-SVC-A');
  });

  it('takes nat OUTPUT for a locally generated packet (and not PREROUTING)', () => {
    const text = `*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-SEP-X - [0:0]\n-A OUTPUT -j KUBE-SERVICES\n-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m tcp --dport 443 -j KUBE-SEP-X\n-A KUBE-SEP-X -p tcp -m tcp -j DNAT --to-destination 192.168.0.2:6443\nCOMMIT\n`;
    const tables = parseIptablesSave(text);
    const fromNode = traceIptables(tables, packet(NODE_IP, '10.96.0.1', 443), NODE);
    expect(fromNode.natHook).toBe('OUTPUT');
    expect(fromNode.dnat.map((d) => d.destination)).toEqual(['192.168.0.2:6443']);
    // The DNAT destination is the node itself: filter OUTPUT, then INPUT.
    expect(fromNode.filterHooks).toEqual(['OUTPUT', 'INPUT']);
    const fromPod = traceIptables(tables, packet('10.244.0.5', '10.96.0.1', 443), NODE);
    expect(fromPod.natHook).toBe('PREROUTING');
    expect(fromPod.verdict).toBe('ACCEPT');
    expect(fromPod.dnat).toEqual([]);
  });

  it('detects local traffic by input interface (-i with a + wildcard, negated)', () => {
    const text = `*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-B - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n-A PREROUTING -j KUBE-SERVICES\n-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000\n-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-B\n-A KUBE-SVC-B ! -i veth+ -d 10.96.0.20/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ\n-A KUBE-SVC-B -j DNAT --to-destination 10.244.0.7:8080\nCOMMIT\n`;
    const tables = parseIptablesSave(text);
    expect(traceIptables(tables, packet('10.244.0.9', '10.96.0.20', 80, { inInterface: 'veth1234' }), NODE).masquerade).toBe(false);
    expect(traceIptables(tables, packet('10.244.0.9', '10.96.0.20', 80, { inInterface: 'eth0' }), NODE).masquerade).toBe(true);
    // No interface given: the packet is not from a veth, so `! -i veth+` holds.
    expect(traceIptables(tables, packet('10.244.0.9', '10.96.0.20', 80), NODE).masquerade).toBe(true);
  });

  it('spells IPv6 endpoints [v6]:port and matches IPv6 CIDRs', () => {
    const text = `*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-SEP-6 - [0:0]\n-A PREROUTING -j KUBE-SERVICES\n-A KUBE-SERVICES -d fd00:10:96::a/128 -p tcp -m tcp --dport 80 -j KUBE-SEP-6\n-A KUBE-SEP-6 -p tcp -m tcp -j DNAT --to-destination [fd00:10:244::5]:8080\nCOMMIT\n`;
    const trace = traceIptables(parseIptablesSave(text), packet('fd00:10:244::9', 'fd00:10:96::a', 80), NODE);
    expect(trace.dnat.map((d) => d.destination)).toEqual(['[fd00:10:244::5]:8080']);
    expect(trace.filterDestination).toEqual({ ip: 'fd00:10:244::5', port: 8080 });
  });

  it('follows gotos and RETURNs, multiport --dports, and KUBE-MARK-DROP of old layouts', () => {
    const text = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-G - [0:0]',
      ':KUBE-FW-OLD - [0:0]',
      ':KUBE-MARK-DROP - [0:0]',
      '-A PREROUTING -j KUBE-SERVICES',
      '-A KUBE-MARK-DROP -j MARK --set-xmark 0x8000/0x8000',
      '-A KUBE-SERVICES -p tcp -m multiport --dports 8000:8100,9000 -g KUBE-G',
      '-A KUBE-SERVICES -d 5.6.7.8/32 -p tcp -m tcp --dport 80 -m comment --comment "ns/lb:http loadbalancer IP" -j KUBE-FW-OLD',
      '-A KUBE-G -s 10.0.0.0/8 -j RETURN',
      '-A KUBE-G -j DNAT --to-destination 10.9.9.9',
      '-A KUBE-FW-OLD -s 203.0.113.0/25 -j DNAT --to-destination 10.1.1.1:80',
      '-A KUBE-FW-OLD -m comment --comment "ns/lb:http loadbalancer IP" -j KUBE-MARK-DROP',
      'COMMIT',
    ].join('\n');
    const tables = parseIptablesSave(text);
    expect(traceIptables(tables, packet('203.0.113.2', '1.1.1.1', 9000), NODE).dnat.map((d) => d.destination)).toEqual(['10.9.9.9:9000']);
    // RETURN from a goto'd chain returns to KUBE-SERVICES' caller: no later KUBE-SERVICES rule applies.
    const returned = traceIptables(tables, packet('10.0.0.2', '5.6.7.8', 8050), NODE);
    expect(returned.verdict).toBe('ACCEPT');
    expect(returned.steps.map((s) => s.action)).toEqual(['jump', 'goto', 'return']);
    const dropped = traceIptables(tables, packet('203.0.113.200', '5.6.7.8', 80), NODE);
    expect(dropped.verdict).toBe('DROP');
    expect(dropped.decidedBy?.chain).toBe('KUBE-FW-OLD');
  });

  it('asks matchSet about -m set, and REDIRECTs to a local port', () => {
    const text = `*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-PORTALS-CONTAINER - [0:0]\n-A PREROUTING -j KUBE-SERVICES\n-A PREROUTING -j KUBE-PORTALS-CONTAINER\n-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT\n-A KUBE-PORTALS-CONTAINER -d 10.96.0.30/32 -p tcp -m comment --comment "ns/old:" -m tcp --dport 80 -j REDIRECT --to-ports 36789\nCOMMIT\n`;
    const tables = parseIptablesSave(text);
    const seen: string[] = [];
    const inSet = traceIptables(tables, packet('10.0.0.2', '10.96.0.30', 80), NODE, {
      matchSet: (set, flags, negated) => {
        seen.push(`${set} ${flags} ${negated}`);
        return true;
      },
    });
    expect(seen).toEqual(['KUBE-CLUSTER-IP dst,dst false']);
    expect(inSet.redirect).toBeUndefined();
    const redirected = traceIptables(tables, packet('10.0.0.2', '10.96.0.30', 80), NODE);
    expect(redirected.redirect?.port).toBe(36789);
    expect(redirected.verdict).toBe('DNAT');
    expect(redirected.filterHooks).toEqual(['INPUT']);
  });
});

describe('parseIptablesSave on a live node', () => {
  const LIVE = `# Generated by iptables-nft-save v1.8.9 (nf_tables) on Sun Dec  6 10:00:00 2026
*nat
:PREROUTING ACCEPT [12:720]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [40:2400]
:POSTROUTING ACCEPT [40:2400]
:DOCKER - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-W - [0:0]
-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A PREROUTING -p tcp -m tcp --dport 80 -j DNAT --to-destination 172.17.0.2:80
-A DOCKER -i docker0 -j RETURN
-A KUBE-SERVICES -d 10.96.0.40/32 -p tcp -m comment --comment "web/site:http cluster IP" -m owner --uid-owner 0 -m tcp --dport 80 -j KUBE-SVC-W
-A KUBE-SERVICES -d 10.96.0.40/32 -p tcp -m comment --comment "web/site:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-W
-A KUBE-SVC-W -m comment --comment "web/site:http -> 10.244.0.8:80" -j DNAT --to-destination 10.244.0.8:80
COMMIT
# Completed on Sun Dec  6 10:00:00 2026
# Warning: iptables-legacy tables present, use iptables-legacy-save to see them
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -j DOCKER-USER
this line is garbage
COMMIT
`;

  it('keeps foreign rules and skips them in built-in chains; a KUBE- rule it does not understand is noted, not matched', () => {
    const tables = parseIptablesSave(LIVE);
    expect(savedChain(tables, 'nat', 'PREROUTING')!.rules).toHaveLength(3);
    expect(savedChain(tables, 'filter', 'FORWARD')!.policy).toBe('DROP');
    expect(tables.skippedLines).toEqual(['this line is garbage']);
    const trace = traceIptables(tables, packet('10.244.0.3', '10.96.0.40', 80), NODE);
    expect(trace.dnat.map((d) => d.destination)).toEqual(['10.244.0.8:80']);
    const noted = trace.steps.find((s) => s.action === 'not-understood');
    expect(noted?.note).toBe('not understood (--uid-owner 0); treated as not matching');
    expect(noted?.comment).toBe('web/site:http cluster IP');
    // docker's own DNAT in PREROUTING is not a Service rule and is not followed.
    expect(traceIptables(tables, packet('203.0.113.2', '1.1.1.1', 80), NODE).verdict).toBe('ACCEPT');
  });

  it('merges a restore payload with restore semantics: -X deletes, :CHAIN flushes', () => {
    const tables = parseIptablesSave(`*nat\n:KUBE-SVC-A - [0:0]\n-A KUBE-SVC-A -j KUBE-SEP-1\n-X KUBE-SEP-OLD\nCOMMIT\n*nat\n:KUBE-SEP-OLD - [0:0]\n:KUBE-SVC-A - [0:0]\n-X KUBE-SEP-OLD\nCOMMIT\n`);
    expect(savedChain(tables, 'nat', 'KUBE-SVC-A')!.rules).toEqual([]);
    expect(savedChain(tables, 'nat', 'KUBE-SEP-OLD')).toBeUndefined();
  });
});
