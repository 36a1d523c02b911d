import type { CommandExecutor, CommandResult, PacketTrace, RuleSnapshot, TraceNode, TracePacket } from '@kube-proxy/core';
import { isNoRulesFound, traceWords } from '@kube-proxy/core';
import { dumpToString } from '@kube-proxy/netfilter-iptables/testing';
import { iptablesBackend } from '../plugin.js';
import { FakeProxier, makeTestService } from '../render/testing/fake-proxier.js';
import { iptablesTracer } from './iptables-tracer.js';
import { UPSTREAM_OVERALL_EXPECTED, upstreamOverallLiveDump } from './testing/upstream-overall-dump.js';

const NODE: TraceNode = { name: 'test-node', addresses: ['192.168.0.2', '192.168.1.2', '192.168.99.11', '2001:db8::1', '2001:db8:1::2'] };

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

function trace(snapshot: RuleSnapshot, sourceIP: string, destIP: string, destPort: number, extra: Partial<TracePacket> = {}): PacketTrace {
  return iptablesTracer.trace(snapshot, packet(sourceIP, destIP, destPort, extra), NODE);
}

/**
 * A fake executor answering iptables-save per command line (the tracer runs each save without -t, so
 * `iptables-nft-save` is the whole dump); a command with no entry is a missing binary, a null entry a
 * failing one.
 */
function fakeExecutor(answers: Record<string, string | null>): CommandExecutor & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    calls,
    async run(command: string, args: readonly string[]): Promise<CommandResult> {
      calls.push([command, ...args]);
      const key = [command, ...args].join(' ');
      if (!(command in answers) && !(key in answers)) return { exitCode: null, stdout: '', stderr: '', spawnError: `spawn ${command} ENOENT` };
      const out = answers[key];
      if (out === undefined || out === null) return { exitCode: 1, stdout: '', stderr: `iptables-save: table does not exist`, };
      return { exitCode: 0, stdout: out, stderr: '' };
    },
  };
}

describe('the iptables tracer over upstream-written rules (TestOverallIPTablesRules, as a live node prints them)', () => {
  let snapshot: RuleSnapshot;
  beforeAll(async () => {
    const executor = fakeExecutor({
      'iptables-legacy-save': '', // no legacy table loaded: a save without -t prints nothing (and creates none)
      'iptables-nft-save': upstreamOverallLiveDump(),
    });
    const read = await iptablesTracer.readLive(executor, 'IPv4');
    if (isNoRulesFound(read)) throw new Error(read.lookedFor);
    snapshot = read;
    // each variant once, without -t: iptables-nft-save fetches the whole ruleset whatever -t says
    expect(executor.calls).toEqual([['iptables-legacy-save'], ['iptables-nft-save']]);
  });

  it('reads the variant that holds KUBE-SERVICES', () => {
    expect(snapshot.mode).toBe('iptables');
    expect(snapshot.source).toBe('iptables-nft-save (nat, filter; 24 KUBE-SVC-/KUBE-SEP- rules)');
  });

  // Upstream's flows over these services (TestTracePacket), through the PacketTrace contract.
  it('cluster IP from a pod: DNAT, not masqueraded, the Service from the comment', () => {
    const t = trace(snapshot, '10.0.0.2', '172.30.0.41', 80);
    expect(t).toEqual(
      expect.objectContaining({
        verdict: 'DNAT',
        endpoints: ['10.180.0.1:80'],
        choices: [{ endpoint: '10.180.0.1:80', probability: 1 }],
        masquerade: false,
        masqueradeReason: traceWords.notMasqueraded,
        service: 'ns1/svc1:p80',
        reason: traceWords.sentTo('ns1/svc1:p80', 1),
      }),
    );
    expect(t.path.slice(0, 2)).toEqual([
      { where: 'nat/PREROUTING', rule: '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES', note: 'jump to KUBE-SERVICES' },
      {
        where: 'nat/KUBE-SERVICES',
        rule: '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O',
        service: 'ns1/svc1:p80',
        note: 'jump to KUBE-SVC-XPGD46QRK7WJZT7O',
      },
    ]);
    expect(t.path.at(-1)?.where).toBe('filter/FORWARD');
  });

  it('cluster IP from the node (OUTPUT path): masqueraded as off-cluster traffic', () => {
    const t = trace(snapshot, '192.168.0.2', '172.30.0.41', 80);
    expect(t.path[0]?.where).toBe('nat/OUTPUT');
    expect(t.masquerade).toBe(true);
    expect(t.masqueradeReason).toBe(traceWords.masqueradeOffCluster);
    expect(t.path.find((s) => s.note?.startsWith('marked for masquerade'))?.where).toBe('nat/KUBE-SVC-XPGD46QRK7WJZT7O');
  });

  it('two endpoints with 50% each', () => {
    const t = trace(snapshot, '10.0.0.2', '172.30.0.44', 80);
    expect(t.endpoints).toEqual(['10.180.0.4:80', '10.180.0.5:80']);
    expect(t.choices).toEqual([
      { endpoint: '10.180.0.4:80', probability: 0.5 },
      { endpoint: '10.180.0.5:80', probability: 0.5 },
    ]);
    expect(t.reason).toBe(traceWords.sentTo('ns4/svc4:p80', 2));
    expect(t.path.filter((s) => s.note?.includes('(50% of new connections)'))).toHaveLength(4);
  });

  it('LOCAL source to an external IP under eTP Local: routed to the cluster and masqueraded (upstream "LOCAL, KUBE-MARK-MASQ")', () => {
    const t = trace(snapshot, '192.168.0.2', '192.168.99.22', 80);
    expect(t.endpoints).toEqual(['10.180.0.2:80']);
    expect(t.masquerade).toBe(true);
    expect(t.masqueradeReason).toBe(traceWords.masqueradeLocalSource);
  });

  it('external client to that external IP: DROP, externalTrafficPolicy Local without a local endpoint (upstream "DROP")', () => {
    const t = trace(snapshot, '203.0.113.2', '192.168.99.22', 80);
    expect(t.verdict).toBe('DROP');
    expect(t.endpoints).toEqual([]);
    expect(t.service).toBe('ns2/svc2:p80');
    expect(t.reason).toBe(traceWords.noLocalEndpoints('ns2/svc2:p80', 'test-node'));
    expect(t.path.at(-1)).toEqual(expect.objectContaining({ where: 'filter/KUBE-EXTERNAL-SERVICES', note: 'dropped' }));
  });

  it('the health check node port from the node: ACCEPT (upstream "ACCEPT (NodePortHealthCheck)")', () => {
    const t = trace(snapshot, '192.168.0.2', '192.168.0.2', 30000);
    expect(t.verdict).toBe('ACCEPT');
    expect(t.service).toBe('ns2/svc2:p80');
    expect(t.reason).toBe('accepted by filter/KUBE-NODEPORTS: "ns2/svc2:p80 health check node port"');
  });

  it('no endpoints: REJECT with the reason (upstream "REJECT")', () => {
    const t = trace(snapshot, '10.0.0.2', '172.30.0.46', 80);
    expect(t.verdict).toBe('REJECT');
    expect(t.service).toBe('ns6/svc6:p80');
    expect(t.reason).toBe(traceWords.noEndpoints('ns6/svc6:p80'));
    expect(t.reason).toBe('service ns6/svc6 has no ready endpoints for port ns6/svc6:p80');
  });

  it('loadBalancerSourceRanges: an allowed source reaches the endpoint (masqueraded), a blocked one is dropped', () => {
    const allowed = trace(snapshot, '203.0.113.2', '5.6.7.8', 80);
    expect(allowed.endpoints).toEqual(['10.180.0.3:80']);
    expect(allowed.masqueradeReason).toBe(traceWords.masqueradeExternal);
    // ClientIP affinity: the --rcheck rule never matches a first packet; the endpoint is still listed.
    expect(allowed.path.some((s) => s.rule.includes('--rcheck'))).toBe(false);
    const blocked = trace(snapshot, '203.0.113.130', '5.6.7.8', 80);
    expect(blocked.verdict).toBe('DROP');
    expect(blocked.reason).toBe(traceWords.outsideSourceRanges('203.0.113.130', 'ns5/svc5:p80'));
    expect(blocked.path.at(-1)?.where).toBe('filter/KUBE-PROXY-FIREWALL');
  });

  it('a NodePort from outside: DNAT and masqueraded', () => {
    const t = trace(snapshot, '203.0.113.2', '192.168.0.2', 3003);
    expect(t.endpoints).toEqual(['10.180.0.3:80']);
    expect(t.masquerade).toBe(true);
    expect(t.service).toBe('ns3/svc3:p80');
  });

  it('no Service rule: ACCEPT unchanged; a cluster IP on another port says so', () => {
    const none = trace(snapshot, '10.0.0.2', '10.0.0.3', 80);
    expect(none).toEqual(expect.objectContaining({ verdict: 'ACCEPT', endpoints: [], choices: [], service: null, masquerade: false }));
    expect(none.reason).toBe(traceWords.noServiceRule('10.0.0.3', 80, 'TCP'));
    const otherPort = trace(snapshot, '10.0.0.2', '172.30.0.41', 443);
    expect(otherPort.reason).toBe(traceWords.invalidClusterIPPort('172.30.0.41', 443, 'TCP'));
  });

  it("tolerates docker's rules beside upstream's (and does not follow them)", () => {
    const t = trace(snapshot, '203.0.113.2', '192.168.0.2', 8080);
    expect(t.verdict).toBe('ACCEPT');
    expect(t.path.every((s) => !s.rule.includes('DOCKER'))).toBe(true);
  });

  it("objectsOf: the Service's chains with rule counts and endpoints, and its rules in the shared chains", () => {
    expect(iptablesTracer.objectsOf(snapshot, 'ns5/svc5')).toEqual([
      { kind: 'chain', name: 'nat/KUBE-SVC-NUKIZ6OKUXPJNT4C', rules: 3, endpoints: ['10.180.0.3:80'] },
      { kind: 'chain', name: 'nat/KUBE-EXT-NUKIZ6OKUXPJNT4C', rules: 2, endpoints: ['10.180.0.3:80'] },
      { kind: 'chain', name: 'nat/KUBE-FW-NUKIZ6OKUXPJNT4C', rules: 2, endpoints: ['10.180.0.3:80'] },
      { kind: 'chain', name: 'nat/KUBE-SEP-I77PXRDZVX7PMWMN', rules: 2, endpoints: ['10.180.0.3:80'] },
      { kind: 'rules in shared chain', name: 'filter/KUBE-PROXY-FIREWALL', rules: 1 },
      { kind: 'rules in shared chain', name: 'nat/KUBE-NODEPORTS', rules: 2 },
      { kind: 'rules in shared chain', name: 'nat/KUBE-SERVICES', rules: 2 },
    ]);
    expect(iptablesTracer.objectsOf(snapshot, 'ns6/svc6')).toEqual([{ kind: 'rules in shared chain', name: 'filter/KUBE-SERVICES', rules: 1 }]);
    expect(iptablesTracer.objectsOf(snapshot, 'ns9/none')).toEqual([]);
  });
});

describe('readLive', () => {
  const LEFTOVER = `*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-OLD - [0:0]\n-A KUBE-SVC-OLD -j DNAT --to-destination 10.9.9.9:80\nCOMMIT\n`;

  it('both variants hold KUBE-SERVICES: traces the one with more KUBE-SVC/KUBE-SEP rules and says which', async () => {
    const executor = fakeExecutor({
      'iptables-legacy-save': `${LEFTOVER}*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n`,
      'iptables-nft-save': upstreamOverallLiveDump(),
    });
    const read = await iptablesTracer.readLive(executor, 'IPv4');
    expect(isNoRulesFound(read)).toBe(false);
    expect((read as RuleSnapshot).source).toBe(
      'iptables-nft-save (nat, filter; 24 KUBE-SVC-/KUBE-SEP- rules); iptables-legacy-save also holds KUBE-SERVICES, with 1 KUBE-SVC-/KUBE-SEP- rules: not traced',
    );
    expect(executor.calls.every(([command]) => /^iptables-(legacy|nft)-save$/.test(command!))).toBe(true);
  });

  it('IPv6 reads ip6tables-…-save', async () => {
    const executor = fakeExecutor({ 'ip6tables-legacy-save': LEFTOVER });
    const read = await iptablesTracer.readLive(executor, 'IPv6');
    expect((read as RuleSnapshot).source).toBe('ip6tables-legacy-save (nat; 1 KUBE-SVC-/KUBE-SEP- rules)');
    expect(executor.calls.map((c) => c[0])).toEqual(['ip6tables-legacy-save', 'ip6tables-nft-save']);
  });

  it('nothing found: names the commands and the chain looked for', async () => {
    const executor = fakeExecutor({
      'iptables-legacy-save': null,
      'iptables-nft-save': '*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n',
    });
    const read = await iptablesTracer.readLive(executor, 'IPv4');
    expect(read).toEqual({
      found: false,
      lookedFor:
        'the chain KUBE-SERVICES in the IPv4 nat table, with iptables-legacy-save, iptables-nft-save (iptables-nft-save printed nat and filter without it)',
    });
  });

  it('no iptables binary at all: falls back to iptables-save, then reports nothing found', async () => {
    const executor = fakeExecutor({});
    const read = await iptablesTracer.readLive(executor, 'IPv4');
    expect(isNoRulesFound(read)).toBe(true);
    expect(executor.calls.map((c) => c.join(' '))).toEqual(['iptables-legacy-save', 'iptables-nft-save', 'iptables-save']);
    expect(isNoRulesFound(read) && read.lookedFor).toContain('(none of them printed a table)');
  });
});

describe('the iptables tracer over our own --dry-run output', () => {
  function threeEndpoints(family: 'IPv4' | 'IPv6', affinity: boolean): FakeProxier {
    const v6 = family === 'IPv6';
    const fp = new FakeProxier(family);
    fp.addService(
      makeTestService('ns1', 'web', (svc) => {
        svc.spec.clusterIP = v6 ? 'fd00:172:30::41' : '172.30.0.41';
        svc.spec.ports = [{ name: 'http', port: 80, protocol: 'TCP' }];
        if (affinity) {
          svc.spec.sessionAffinity = 'ClientIP';
          svc.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
        }
      }),
    );
    const ips = v6 ? ['fd00:10:180::1', 'fd00:10:180::2', 'fd00:10:180::3'] : ['10.180.0.1', '10.180.0.2', '10.180.0.3'];
    fp.setEndpoints('ns1', 'web', 'http', 8080, ips.map((ip) => ({ ip })));
    fp.syncProxyRules();
    expect(fp.lastRestoreError).toBeUndefined();
    return fp;
  }

  it('three endpoints: 1/3 each, from the tables as --dry-run prints them (jump rules included)', () => {
    const snapshot = iptablesTracer.fromDryRun(dumpToString(threeEndpoints('IPv4', false).ipt.dump), 'IPv4');
    expect(snapshot.source).toBe('--dry-run output');
    const t = trace(snapshot, '10.0.0.2', '172.30.0.41', 80);
    expect(t.endpoints).toEqual(['10.180.0.1:8080', '10.180.0.2:8080', '10.180.0.3:8080']);
    for (const c of t.choices) expect(c.probability).toBeCloseTo(1 / 3, 6);
    expect(t.service).toBe('ns1/web:http');
  });

  it('a bare iptables-restore payload gets the jump rules the proxier ensures', () => {
    const snapshot = iptablesTracer.fromDryRun(threeEndpoints('IPv4', false).iptablesData, 'IPv4');
    expect(snapshot.source).toContain('with the jump rules the proxier ensures');
    expect(trace(snapshot, '10.0.0.2', '172.30.0.41', 80).endpoints).toHaveLength(3);
  });

  it('ClientIP affinity lists every endpoint', () => {
    const snapshot = iptablesTracer.fromDryRun(dumpToString(threeEndpoints('IPv4', true).ipt.dump), 'IPv4');
    const t = trace(snapshot, '10.0.0.2', '172.30.0.41', 80);
    expect(t.endpoints).toEqual(['10.180.0.1:8080', '10.180.0.2:8080', '10.180.0.3:8080']);
    expect(t.choices.reduce((sum, c) => sum + c.probability, 0)).toBeCloseTo(1, 9);
  });

  it('IPv6 endpoints are spelled [v6]:port', () => {
    const snapshot = iptablesTracer.fromDryRun(dumpToString(threeEndpoints('IPv6', false).ipt.dump), 'IPv6');
    const t = trace(snapshot, 'fd00:10::2', 'fd00:172:30::41', 80);
    expect(t.endpoints).toEqual(['[fd00:10:180::1]:8080', '[fd00:10:180::2]:8080', '[fd00:10:180::3]:8080']);
  });

  it('interface-based local detection uses the packet input interface', () => {
    const fp = new FakeProxier('IPv4', { localDetector: { kind: 'interface-name-prefix', prefix: 'veth' } });
    fp.addService(
      makeTestService('ns1', 'web', (svc) => {
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'http', port: 80, protocol: 'TCP' }];
      }),
    );
    fp.setEndpoints('ns1', 'web', 'http', 80, [{ ip: '10.180.0.1' }]);
    fp.syncProxyRules();
    const snapshot = iptablesTracer.fromDryRun(dumpToString(fp.ipt.dump), 'IPv4');
    expect(trace(snapshot, '10.0.0.2', '172.30.0.41', 80, { inInterface: 'veth0a1b' }).masquerade).toBe(false);
    const fromOutside = trace(snapshot, '10.0.0.2', '172.30.0.41', 80, { inInterface: 'eth0' });
    expect(fromOutside.masquerade).toBe(true);
    expect(fromOutside.masqueradeReason).toBe(traceWords.masqueradeOffCluster);
  });

  it('internalTrafficPolicy Local without a local endpoint: DROP, with the internal policy named', () => {
    const fp = new FakeProxier('IPv4');
    fp.addService(
      makeTestService('ns1', 'web', (svc) => {
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.internalTrafficPolicy = 'Local';
        svc.spec.ports = [{ name: 'http', port: 80, protocol: 'TCP' }];
      }),
    );
    fp.setEndpoints('ns1', 'web', 'http', 80, [{ ip: '10.180.2.1', nodeName: 'node2' }]);
    fp.syncProxyRules();
    const t = trace(iptablesTracer.fromDryRun(dumpToString(fp.ipt.dump), 'IPv4'), '10.0.0.2', '172.30.0.41', 80);
    expect(t.verdict).toBe('DROP');
    expect(t.service).toBe('ns1/web:http');
    expect(t.reason).toBe('internalTrafficPolicy Local and no local endpoint of ns1/web:http on test-node');
  });

  it('masqueradeAll says so', () => {
    const fp = new FakeProxier('IPv4', { masqueradeAll: true });
    fp.addService(
      makeTestService('ns1', 'web', (svc) => {
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'http', port: 80, protocol: 'TCP' }];
      }),
    );
    fp.setEndpoints('ns1', 'web', 'http', 80, [{ ip: '10.180.0.1' }]);
    fp.syncProxyRules();
    const t = trace(iptablesTracer.fromDryRun(dumpToString(fp.ipt.dump), 'IPv4'), '10.0.0.2', '172.30.0.41', 80);
    expect(t.masqueradeReason).toBe(traceWords.masqueradeAll);
  });

  it('the plugin carries the tracer', () => {
    expect(iptablesBackend.tracer).toBe(iptablesTracer);
  });

  it('refuses another mode\'s snapshot', () => {
    expect(() => iptablesTracer.trace({ mode: 'nftables', family: 'IPv4', source: 'nft' }, packet('10.0.0.2', '10.0.0.3', 80), NODE)).toThrow(
      'the iptables tracer cannot read a nftables snapshot (nft)',
    );
  });

  it('the upstream fixture is upstream text (sanity: parsed as written)', () => {
    expect(UPSTREAM_OVERALL_EXPECTED).toContain('-A KUBE-FW-NUKIZ6OKUXPJNT4C -m comment --comment "other traffic to ns5/svc5:p80 will be dropped by KUBE-PROXY-FIREWALL"');
  });
});
