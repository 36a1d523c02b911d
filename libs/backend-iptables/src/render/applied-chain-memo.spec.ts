/**
 * Partial syncs with an AppliedChainMemo (README, "Where we differ from upstream", item 12): unchanged top-level
 * chains are left out of the payload. The strongest check is the kernel state: for each kind of
 * change, full(A) + partial(A→B) applied with --noflush semantics must leave exactly what full(B)
 * leaves in fresh tables (the in-memory tables the dry-run uses, with target/reference checks).
 */
import type { IPFamily } from '@kube-proxy/core';
import { InMemoryTables } from '@kube-proxy/netfilter-iptables';
import { AppliedChainMemo, appliedChainKey } from './applied-chain-memo.js';
import { ChainNameCache, servicePortEndpointChainName, servicePortPolicyClusterChain } from './chain-names.js';
import type { RenderOptions, RenderResult } from './render-ruleset.js';
import { renderRuleset } from './render-ruleset.js';
import { TEST_NODE_NAME } from './testing/packet-tracer.js';
import { FakeProxier, makeTestService } from './testing/fake-proxier.js';

const TOP_CHAINS = ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD', 'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL', 'KUBE-FIREWALL', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ'];

/** A node as the proxier drives it: state (FakeProxier's maps), one cache, one memo, the "kernel". */
class Node {
  readonly fp: FakeProxier;
  readonly names = new ChainNameCache();
  readonly memo = new AppliedChainMemo();
  readonly tables = new InMemoryTables();
  needFullSync = true;
  /** The last payload handed to restore. */
  payload = '';

  constructor(family: IPFamily = 'IPv4', overrides: Partial<RenderOptions> = {}) {
    this.fp = new FakeProxier(family, overrides);
  }

  /** One sync: render (partial unless a full one is due), restore with --noflush, commit or clear. */
  sync(opts: { failRestore?: boolean } = {}): RenderResult {
    const changed = this.fp.takeChangedServices();
    const r = renderRuleset(
      {
        serviceMap: this.fp.serviceMap,
        endpointsMap: this.fp.endpointsMap,
        changedServices: this.needFullSync ? null : changed,
        existingNatChains: new Set(this.tables.chains('nat')),
        appliedChains: this.memo,
      },
      this.fp.options,
      this.names,
    );
    this.payload = r.payload;
    if (opts.failRestore) {
      this.memo.clear();
      this.needFullSync = true;
      return r;
    }
    this.tables.restore(this.payload, { noFlush: true });
    expect(this.memo.commit(r.appliedChainUpdate!)).toBe(true);
    this.needFullSync = false;
    return r;
  }

  get state(): string {
    return this.tables.saveAll(['filter', 'nat']);
  }
}

/** The tables a full sync of the current state leaves in fresh tables (no memo, fresh cache). */
function fullState(fp: FakeProxier): { text: string; result: RenderResult; payload: string } {
  const tables = new InMemoryTables();
  const result = renderRuleset(
    { serviceMap: fp.serviceMap, endpointsMap: fp.endpointsMap, changedServices: null, existingNatChains: null },
    fp.options,
    new ChainNameCache(),
  );
  const payload = result.payload;
  tables.restore(payload, { noFlush: true });
  return { text: tables.saveAll(['filter', 'nat']), result, payload };
}

/** State A: one service of each kind that puts rules in the top-level chains. */
function buildA(fp: FakeProxier): void {
  const v6 = fp.options.family === 'IPv6';
  const ip = (n: number) => (v6 ? `fd00:30::${n.toString(16)}` : `172.30.0.${n}`);
  const ep = (s: number, e: number) => (v6 ? `fd00:10::${s}:${e}` : `10.${s}.0.${e}`);
  const ext = (n: number) => (v6 ? `2001:db8:99::${n}` : `192.168.99.${n}`);
  const mk = (i: number, fn: Parameters<typeof makeTestService>[2]) => fp.addService(makeTestService(`ns${i}`, `svc${i}`, fn));
  mk(1, (s) => {
    s.spec.clusterIP = ip(41);
    s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
  });
  mk(2, (s) => {
    s.spec.type = 'NodePort';
    s.spec.clusterIP = ip(42);
    s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3002 }];
  });
  mk(3, (s) => {
    s.spec.type = 'LoadBalancer';
    s.spec.externalTrafficPolicy = 'Local';
    s.spec.healthCheckNodePort = 30003;
    s.spec.clusterIP = ip(43);
    s.spec.externalIPs = [ext(11)];
    s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3003 }];
    s.status.loadBalancer = { ingress: [{ ip: ext(1) }] };
    s.spec.loadBalancerSourceRanges = v6 ? ['2001:db8:1::/64'] : ['203.0.113.0/25'];
  });
  mk(4, (s) => {
    s.spec.clusterIP = ip(44);
    s.spec.ports = [{ name: 'p80', port: 80, protocol: 'UDP' }];
  });
  mk(5, (s) => {
    s.spec.type = 'LoadBalancer';
    s.spec.externalTrafficPolicy = 'Local';
    s.spec.healthCheckNodePort = 30005;
    s.spec.clusterIP = ip(45);
    s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3005 }];
    s.status.loadBalancer = { ingress: [{ ip: ext(5) }] };
  });
  mk(6, (s) => {
    s.spec.clusterIP = ip(46);
    s.spec.sessionAffinity = 'ClientIP';
    s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
  });
  fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: ep(1, 1) }, { ip: ep(1, 2) }]);
  fp.setEndpoints('ns2', 'svc2', 'p80', 80, [{ ip: ep(2, 1) }, { ip: ep(2, 2) }]);
  fp.setEndpoints('ns3', 'svc3', 'p80', 80, [{ ip: ep(3, 1), nodeName: TEST_NODE_NAME }, { ip: ep(3, 2) }]);
  // svc4 has no endpoints (REJECT in filter KUBE-SERVICES); svc5 none on this node (DROP in KUBE-EXTERNAL-SERVICES).
  fp.setEndpoints('ns5', 'svc5', 'p80', 80, [{ ip: ep(5, 1) }]);
  fp.setEndpoints('ns6', 'svc6', 'p80', 80, [{ ip: ep(6, 1) }, { ip: ep(6, 2) }]);
}

type Change = (fp: FakeProxier) => void;

const ep = (fp: FakeProxier, s: number, e: number) => (fp.options.family === 'IPv6' ? `fd00:10::${s}:${e}` : `10.${s}.0.${e}`);

const CHANGES: ReadonlyArray<[string, Change]> = [
  ['endpoint moved', (fp) => fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: ep(fp, 1, 1) }, { ip: ep(fp, 1, 3) }])],
  ['endpoint added', (fp) => fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: ep(fp, 1, 1) }, { ip: ep(fp, 1, 2) }, { ip: ep(fp, 1, 9) }])],
  [
    'service added',
    (fp) => {
      fp.addService(
        makeTestService('ns7', 'svc7', (s) => {
          s.spec.clusterIP = fp.options.family === 'IPv6' ? 'fd00:30::47' : '172.30.0.47';
          s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
        }),
      );
      fp.setEndpoints('ns7', 'svc7', 'p80', 80, [{ ip: ep(fp, 7, 1) }]);
    },
  ],
  [
    'service deleted',
    (fp) => {
      fp.deleteService('ns2', 'svc2');
      fp.deleteEndpoints('ns2', 'svc2', 'p80');
    },
  ],
  [
    'nodeport added',
    (fp) =>
      fp.addService(
        makeTestService('ns1', 'svc1', (s) => {
          s.spec.type = 'NodePort';
          s.spec.clusterIP = fp.options.family === 'IPv6' ? 'fd00:30::41' : '172.30.0.41';
          s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3011 }];
        }),
      ),
  ],
  [
    'LB source range changed',
    (fp) => {
      const v6 = fp.options.family === 'IPv6';
      fp.addService(
        makeTestService('ns3', 'svc3', (s) => {
          s.spec.type = 'LoadBalancer';
          s.spec.externalTrafficPolicy = 'Local';
          s.spec.healthCheckNodePort = 30003;
          s.spec.clusterIP = v6 ? 'fd00:30::43' : '172.30.0.43';
          s.spec.externalIPs = [v6 ? '2001:db8:99::11' : '192.168.99.11'];
          s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3003 }];
          s.status.loadBalancer = { ingress: [{ ip: v6 ? '2001:db8:99::1' : '192.168.99.1' }] };
          s.spec.loadBalancerSourceRanges = v6 ? ['2001:db8:2::/64', '2001:db8:3::/64'] : ['203.0.113.128/25', '198.51.100.0/24'];
        }),
      );
    },
  ],
  ['service with no endpoints gets one', (fp) => fp.setEndpoints('ns4', 'svc4', 'p80', 80, [{ ip: ep(fp, 4, 1) }])],
  ['service loses its last endpoint', (fp) => fp.deleteEndpoints('ns6', 'svc6', 'p80')],
  ['external policy service gets a local endpoint', (fp) => fp.setEndpoints('ns5', 'svc5', 'p80', 80, [{ ip: ep(fp, 5, 1), nodeName: TEST_NODE_NAME }])],
  ['nothing changed', () => undefined],
];

describe('partial sync with an AppliedChainMemo: kernel state equals a full sync', () => {
  describe.each(['IPv4', 'IPv6'] as const)('%s', (family) => {
    it.each(CHANGES)('%s', (_name, change) => {
      const node = new Node(family);
      buildA(node.fp);
      const fullA = node.sync();
      expect(fullA.elidedChains).toEqual([]);
      expect(node.state).toBe(fullState(node.fp).text);

      change(node.fp);
      const partial = node.sync();
      const full = fullState(node.fp);
      expect(node.state).toBe(full.text);
      // Smaller input, same kernel: the counts of what the kernel holds are a full sync's.
      expect(node.payload.length).toBeLessThan(full.payload.length);
      expect(partial.filterRuleCountTotal).toBe(full.result.filterRuleCount);
      expect(partial.natRuleCountTotal).toBe(full.result.natRuleCountTotal);
      expect(partial.natRuleCount).toBe(node.payload.split('*nat\n')[1]!.split('\n').filter((l) => l.startsWith('-A ')).length);
      expect(partial.filterRuleCount).toBe(node.payload.split('*nat\n')[0]!.split('\n').filter((l) => l.startsWith('-A ')).length);
    });

    it('stays equal to a full sync through a sequence of partial syncs', () => {
      const node = new Node(family);
      buildA(node.fp);
      node.sync();
      for (const [name, change] of [...CHANGES, ...CHANGES]) {
        change(node.fp);
        node.sync();
        expect({ name, state: node.state }).toEqual({ name, state: fullState(node.fp).text });
      }
    });
  });

  it('in large-cluster mode, across chunk boundaries of the per-chain buffers', () => {
    const node = new Node();
    // 1,200 services × 1 endpoint: over the large-cluster threshold, and nat KUBE-SERVICES spans
    // several 64 KiB chunks.
    for (let i = 0; i < 1200; i++) {
      node.fp.addService(
        makeTestService(`ns${i % 5}`, `svc${i}`, (s) => {
          s.spec.type = i % 3 === 0 ? 'NodePort' : 'ClusterIP';
          s.spec.clusterIP = `172.30.${i >> 8}.${i & 255}`;
          s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', ...(i % 3 === 0 ? { nodePort: 30000 + i } : {}) }];
        }),
      );
      node.fp.setEndpoints(`ns${i % 5}`, `svc${i}`, 'p80', 80, [{ ip: `10.1.${i >> 8}.${i & 255}` }]);
    }
    const full = node.sync();
    expect(full.largeClusterMode).toBe(true);
    node.fp.setEndpoints('ns3', 'svc3', 'p80', 80, [{ ip: '10.9.9.9' }]);
    const partial = node.sync();
    expect(partial.elidedChains).toContain('nat/KUBE-SERVICES');
    expect(node.state).toBe(fullState(node.fp).text);
    node.fp.deleteService('ns2', 'svc7');
    node.fp.deleteEndpoints('ns2', 'svc7', 'p80');
    const del = node.sync();
    expect(del.elidedChains).not.toContain('nat/KUBE-SERVICES');
    expect(node.state).toBe(fullState(node.fp).text);
  });
});

describe('partial sync payload with an AppliedChainMemo', () => {
  it('for a one-endpoint change holds only that service chains, the stale endpoint chain deletion and empty table sections', () => {
    const node = new Node();
    buildA(node.fp);
    node.sync();
    node.fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.1.0.1' }, { ip: '10.1.0.3' }]);
    const r = node.sync();

    const svc = servicePortPolicyClusterChain('ns1/svc1:p80', 'TCP');
    const sep = (ip: string) => servicePortEndpointChainName('ns1/svc1:p80', 'TCP', `${ip}:80`);
    const [sep1, sep2, sep3] = [sep('10.1.0.1'), sep('10.1.0.2'), sep('10.1.0.3')];
    const lines = node.payload.split('\n');
    expect(node.payload.startsWith('*filter\nCOMMIT\n*nat\n')).toBe(true);
    expect(node.payload.endsWith('COMMIT\n')).toBe(true);
    expect(lines.filter((l) => l.startsWith(':'))).toEqual([`:${svc} - [0:0]`, `:${sep1} - [0:0]`, `:${sep3} - [0:0]`, `:${sep2} - [0:0]`]);
    // Every rule is in one of svc1's chains; the only other line deletes the moved endpoint's chain.
    const owners = new Set(lines.filter((l) => l.startsWith('-A ')).map((l) => l.split(' ')[1]));
    expect([...owners].sort()).toEqual([sep1, sep3, svc].sort());
    expect(lines.filter((l) => l.startsWith('-X '))).toEqual([`-X ${sep2}`]);
    expect(r.staleChainsDeleted).toBe(1);
    expect(r.elidedChains).toEqual([
      'filter/KUBE-SERVICES',
      'filter/KUBE-EXTERNAL-SERVICES',
      'filter/KUBE-FORWARD',
      'filter/KUBE-NODEPORTS',
      'filter/KUBE-PROXY-FIREWALL',
      'filter/KUBE-FIREWALL',
      'nat/KUBE-SERVICES',
      'nat/KUBE-NODEPORTS',
      'nat/KUBE-POSTROUTING',
      'nat/KUBE-MARK-MASQ',
    ]);
    expect(r.appliedChainUpdate!.chains).toEqual([]);
    expect(r.filterRuleCount).toBe(0);
    expect(r.natChainCount).toBe(4);
  });

  it('with nothing changed is two empty table sections', () => {
    const node = new Node();
    buildA(node.fp);
    node.sync();
    const r = node.sync();
    expect(node.payload).toBe('*filter\nCOMMIT\n*nat\nCOMMIT\n');
    expect(r.payloadLength).toBe(node.payload.length);
    expect(r.natRuleCount).toBe(0);
    expect(r.natRuleCountTotal).toBe(fullState(node.fp).result.natRuleCountTotal);
  });

  it('rewrites nat KUBE-SERVICES in full when a service is added, and nothing else top-level', () => {
    const node = new Node();
    buildA(node.fp);
    node.sync();
    CHANGES.find(([n]) => n === 'service added')![1](node.fp);
    const r = node.sync();
    const full = fullState(node.fp).payload;
    const nat = node.payload.split('*nat\n')[1]!;
    expect(node.payload.startsWith('*filter\nCOMMIT\n')).toBe(true);
    expect(nat.startsWith(':KUBE-SERVICES - [0:0]\n')).toBe(true);
    expect(nat).not.toMatch(/^:KUBE-(NODEPORTS|POSTROUTING|MARK-MASQ) /m);
    // Every KUBE-SERVICES rule of a full sync, in the same order.
    const servicesRules = (text: string) => text.split('\n').filter((l) => l.startsWith('-A KUBE-SERVICES ') && text.indexOf(l) > text.indexOf('*nat'));
    expect(servicesRules(node.payload)).toEqual(servicesRules(full));
    expect(r.appliedChainUpdate!.chains).toEqual(['nat/KUBE-SERVICES']);
    expect(r.elidedChains).not.toContain('nat/KUBE-SERVICES');
  });

  it('rewrites the filter chains whose rules change (a service losing its endpoints gets a REJECT)', () => {
    const node = new Node();
    buildA(node.fp);
    node.sync();
    node.fp.deleteEndpoints('ns6', 'svc6', 'p80');
    const r = node.sync();
    expect(r.appliedChainUpdate!.chains).toEqual(['filter/KUBE-SERVICES', 'nat/KUBE-SERVICES']);
    expect(node.payload).toMatch(/^\*filter\n:KUBE-SERVICES - \[0:0\]\n(-A KUBE-SERVICES .*\n)+COMMIT\n\*nat\n/);
    expect(node.payload).toContain('"ns6/svc6:p80 has no endpoints"');
  });

  it('writes every top-level chain again once the memo was cleared (e.g. after a failed restore)', () => {
    const node = new Node();
    buildA(node.fp);
    node.sync();
    node.fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.1.0.1' }]);
    node.sync({ failRestore: true }); // memo cleared, next sync full
    expect(node.memo.size).toBe(0);
    expect(node.needFullSync).toBe(true);
    const full = node.sync();
    expect(full.elidedChains).toEqual([]);
    // The full payload (plus the deletion of the endpoint chain the failed restore left behind).
    const stale = /^-X (.*)$/m.exec(node.payload)![1]!;
    expect(node.payload.replace(`:${stale} - [0:0]\n`, '').replace(`-X ${stale}\n`, '')).toBe(fullState(node.fp).payload);
    expect(node.state).toBe(fullState(node.fp).text);
    expect(node.memo.size).toBe(10);
    // Partial syncs after the recovery elide again.
    node.fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.1.0.1' }, { ip: '10.1.0.4' }]);
    expect(node.sync().elidedChains).toHaveLength(10);
    expect(node.state).toBe(fullState(node.fp).text);
  });
});

describe('full syncs with an AppliedChainMemo', () => {
  it.each(['IPv4', 'IPv6'] as const)('write exactly the payload of a full sync without one (%s)', (family) => {
    const node = new Node(family);
    buildA(node.fp);
    node.sync();
    expect(node.payload).toBe(fullState(node.fp).payload);
    for (const [, change] of CHANGES) change(node.fp);
    node.sync(); // partial
    node.needFullSync = true;
    const r = node.sync();
    expect(node.payload).toBe(fullState(node.fp).payload);
    expect(r.elidedChains).toEqual([]);
    expect(r.filterRuleCountTotal).toBe(r.filterRuleCount);
    // All present top-level chains are recorded; KUBE-FIREWALL only for IPv4 (localhost nodeports).
    expect(r.appliedChainUpdate!.chains).toHaveLength(family === 'IPv4' ? 10 : 9);
  });

  it('record each chain exactly as written', () => {
    const node = new Node();
    buildA(node.fp);
    node.sync();
    const natSection = node.payload.split('*nat\n')[1]!;
    for (const chain of TOP_CHAINS) {
      for (const table of ['filter', 'nat'] as const) {
        const text = table === 'nat' ? natSection : node.payload.split('*nat\n')[0]!;
        const declared = text.includes(`\n:${chain} - [0:0]\n`) || text.startsWith(`:${chain} - [0:0]\n`);
        const rules = text.split('\n').filter((l) => l.startsWith(`-A ${chain} `)).map((l) => `${l}\n`).join('');
        expect({ chain, table, memo: node.memo.get(appliedChainKey(table, chain))?.toString('latin1') }).toEqual({
          chain,
          table,
          memo: declared ? rules : undefined,
        });
      }
    }
  });
});

describe('AppliedChainMemo', () => {
  const render = (node: Node, changed: ReadonlySet<string> | null) =>
    renderRuleset(
      { serviceMap: node.fp.serviceMap, endpointsMap: node.fp.endpointsMap, changedServices: changed, existingNatChains: null, appliedChains: node.memo },
      node.fp.options,
      node.names,
    );

  it('refuses an update rendered before clear(): a sync in flight during a flush cannot refill it', () => {
    const node = new Node();
    buildA(node.fp);
    const r = render(node, null);
    node.memo.clear();
    expect(node.memo.commit(r.appliedChainUpdate!)).toBe(false);
    expect(node.memo.size).toBe(0);
    // So the next partial sync writes every top-level chain.
    expect(render(node, new Set()).elidedChains).toEqual([]);
  });

  it('throws when committing an update whose buffers a later render reused, or to another memo', () => {
    const node = new Node();
    buildA(node.fp);
    const r1 = render(node, null);
    render(node, null);
    expect(() => node.memo.commit(r1.appliedChainUpdate!)).toThrow(/reused its buffers/);
    const r3 = render(node, null);
    expect(() => new AppliedChainMemo().commit(r3.appliedChainUpdate!)).toThrow(/different AppliedChainMemo/);
  });

  it('keeps one Buffer per chain: unchanged content is not copied, smaller content is written in place', () => {
    const node = new Node();
    buildA(node.fp);
    node.sync();
    const before = node.memo.get('nat/KUBE-SERVICES')!;
    node.sync(); // nothing changed
    expect(node.memo.get('nat/KUBE-SERVICES')!.buffer).toBe(before.buffer);
    expect(node.memo.get('nat/KUBE-SERVICES')!.byteOffset).toBe(before.byteOffset);
    node.fp.deleteService('ns2', 'svc2');
    node.fp.deleteEndpoints('ns2', 'svc2', 'p80');
    node.sync(); // KUBE-SERVICES shrinks by a rule
    const after = node.memo.get('nat/KUBE-SERVICES')!;
    expect(after.length).toBeLessThan(before.length);
    expect(after.buffer).toBe(before.buffer);
    // clear() keeps the memory for the full sync that follows.
    node.memo.clear();
    node.needFullSync = true;
    node.sync();
    expect(node.memo.get('nat/KUBE-SERVICES')!.buffer).toBe(before.buffer);
  });

  it('without a memo, partial syncs write every top-level chain as upstream', () => {
    const fp = new FakeProxier();
    buildA(fp);
    fp.syncProxyRules();
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.1.0.1' }]);
    const r = fp.syncProxyRules();
    expect(r.appliedChainUpdate).toBeNull();
    expect(r.elidedChains).toEqual([]);
    expect(fp.iptablesData).toContain(':KUBE-SERVICES - [0:0]');
    expect(fp.iptablesData).toContain(':KUBE-FORWARD - [0:0]');
    expect(r.filterRuleCountTotal).toBe(r.filterRuleCount);
  });

  it('FakeProxier (upstream fake iptables) with a memo ends with the same rules as without', () => {
    const a = new FakeProxier();
    const b = new FakeProxier();
    b.appliedChains = new AppliedChainMemo();
    for (const fp of [a, b]) {
      buildA(fp);
      fp.syncProxyRules();
    }
    for (const [, change] of CHANGES) {
      for (const fp of [a, b]) {
        change(fp);
        fp.syncProxyRules();
        expect(fp.lastRestoreError).toBeUndefined();
      }
      expect(b.iptablesData.length).toBeLessThan(a.iptablesData.length);
      for (const table of ['filter', 'nat']) {
        for (const chain of [...a.ipt.chains(table)].sort()) {
          const rules = (fp: FakeProxier) => fp.ipt.dump.tables.find((t) => t.name === table)!.chains.find((c) => c.name === chain)?.rules.map((x) => x.raw);
          expect({ table, chain, rules: rules(b) }).toEqual({ table, chain, rules: rules(a) });
        }
        expect([...b.ipt.chains(table)].sort()).toEqual([...a.ipt.chains(table)].sort());
      }
    }
  });
});
