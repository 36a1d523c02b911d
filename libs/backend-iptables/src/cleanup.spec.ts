import { nullLogger } from '@kube-proxy/core';
import { type IptablesInterface, type RestoreOptions, type Table } from '@kube-proxy/netfilter-iptables';
import { cleanupIptables } from './cleanup.js';
import { DryRunIptables, InMemoryTables } from '@kube-proxy/netfilter-iptables';
import { savedNodeTables } from './cleanup-test-table.js';
import { JUMP_CHAINS, jumpRuleArgs, KUBELET_JUMP_CHAINS } from './render/index.js';

const NAT_STATE = `*nat
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
:KUBE-EXT-XPGD46QRK7WJZT7O - [0:0]
:CNI-HOSTPORT - [0:0]
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-SERVICES -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
-A KUBE-SVC-XPGD46QRK7WJZT7O -j KUBE-SEP-SXIVWICOYRO3J4NJ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -s 10.180.0.2 -j KUBE-MARK-MASQ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m tcp -p tcp -j DNAT --to-destination 10.180.0.2:80
-A KUBE-EXT-XPGD46QRK7WJZT7O -j KUBE-SVC-XPGD46QRK7WJZT7O
-A CNI-HOSTPORT -j RETURN
-A POSTROUTING -j CNI-HOSTPORT
COMMIT
*filter
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
:KUBE-FIREWALL - [0:0]
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
COMMIT
`;

async function programmed(): Promise<DryRunIptables> {
  const ipt = new DryRunIptables('IPv4');
  for (const jump of [...JUMP_CHAINS, ...KUBELET_JUMP_CHAINS]) {
    await ipt.ensureChain(jump.table, jump.dstChain);
    await ipt.ensureRule('-I', jump.table, jump.srcChain, jumpRuleArgs(jump));
  }
  for (const table of ['mangle', 'nat', 'filter'] as const) await ipt.ensureChain(table, 'KUBE-PROXY-CANARY');
  await ipt.restore(NAT_STATE, { noFlush: true, counters: true });
  return ipt;
}

describe('cleanupIptables', () => {
  it('removes every jump rule and every chain it owns, leaving other rules and kubelet chains', async () => {
    const ipt = await programmed();
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    const t = ipt.tables;
    expect(t.chains('nat')).toEqual(['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING', 'CNI-HOSTPORT']);
    expect(t.rules('nat', 'POSTROUTING')).toEqual(['-j CNI-HOSTPORT']);
    expect(t.rules('nat', 'PREROUTING')).toEqual([]);
    expect(t.chains('filter')).toEqual(['INPUT', 'FORWARD', 'OUTPUT', 'KUBE-FIREWALL']);
    // kubelet's jumps to KUBE-FIREWALL are not ours to remove (upstream leaves them too).
    expect(t.rules('filter', 'INPUT')).toEqual(['-j KUBE-FIREWALL']);
    expect(t.chains('mangle')).toEqual(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);
  });

  it('is safe on a clean node and idempotent', async () => {
    const clean = new DryRunIptables('IPv4');
    expect(await cleanupIptables(clean, nullLogger)).toBe(false);
    expect(clean.tables.tableNames()).toEqual([]);

    const ipt = await programmed();
    await cleanupIptables(ipt, nullLogger);
    const after = ipt.tables.saveAll();
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    expect(ipt.tables.saveAll()).toBe(after);
  });

  it('leaves an owned chain that a foreign rule still references (instead of failing the whole table)', async () => {
    const ipt = await programmed();
    await ipt.ensureRule('-A', 'nat', 'CNI-HOSTPORT', ['-j', 'KUBE-MARK-MASQ']);
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    expect(ipt.tables.chainExists('nat', 'KUBE-MARK-MASQ')).toBe(true);
    expect(ipt.tables.rules('nat', 'KUBE-MARK-MASQ')).toEqual(['-j MARK --or-mark 0x4000']);
    expect(ipt.tables.chainExists('nat', 'KUBE-SERVICES')).toBe(false);
    expect(ipt.tables.chainExists('nat', 'KUBE-SEP-SXIVWICOYRO3J4NJ')).toBe(false);
  });

  it('removes duplicated jump rules', async () => {
    const ipt = await programmed();
    const jump = JUMP_CHAINS.find((j) => j.table === 'nat' && j.srcChain === 'PREROUTING');
    await ipt.restore(
      '*nat\n-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\nCOMMIT\n',
      { noFlush: true, counters: true },
    );
    expect(ipt.tables.rules('nat', 'PREROUTING')).toHaveLength(2);
    expect(jump?.dstChain).toBe('KUBE-SERVICES');
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    expect(ipt.tables.rules('nat', 'PREROUTING')).toEqual([]);
    expect(ipt.tables.chainExists('nat', 'KUBE-SERVICES')).toBe(false);
  });
});

/** Every call the cleanup makes, over a DryRunIptables or over fixed iptables-save text. */
function recording(inner: IptablesInterface | { saves: Partial<Record<Table, string>> }) {
  const calls: string[] = [];
  const payloads: string[] = [];
  const real = 'saves' in inner ? undefined : inner;
  const saves = 'saves' in inner ? inner.saves : {};
  const ipt = {
    family: 'IPv4',
    description: 'recording',
    saveTable: async (table: Table) => {
      calls.push(`save ${table}`);
      return real ? real.saveTable(table) : (saves[table] ?? '');
    },
    restore: async (payload: string, options: RestoreOptions) => {
      calls.push('restore');
      payloads.push(payload);
      if (real) await real.restore(payload, options);
    },
    deleteRule: async (table: Table, chain: string, args: readonly string[]) => {
      calls.push(`deleteRule ${table} ${chain}`);
      if (real) await real.deleteRule(table, chain, args);
    },
    flushChain: async (table: Table, chain: string) => void calls.push(`flush ${table} ${chain}`),
    deleteChain: async (table: Table, chain: string) => void calls.push(`delete ${table} ${chain}`),
  } as unknown as IptablesInterface;
  return { ipt, calls, payloads };
}

describe('cleanupIptables: linear, one transaction per table', () => {
  const referencesTo = Object.getOwnPropertyDescriptor(InMemoryTables.prototype, 'referencesTo') as PropertyDescriptor;
  afterEach(() => Object.defineProperty(InMemoryTables.prototype, 'referencesTo', referencesTo));

  it('unlinks the Services in the same iptables-restore that deletes their chains (never unlinked first)', async () => {
    const { ipt, calls, payloads } = recording(await programmed());
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    // One save and at most one restore per table; no single-rule command that would leave every
    // Service unlinked while the chains are still being worked out.
    expect(calls).toEqual(['save filter', 'restore', 'save nat', 'restore', 'save mangle', 'restore']);
    const natPayload = payloads.find((p) => p.startsWith('*nat')) ?? '';
    expect(natPayload).toContain('-D PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
    expect(natPayload).toContain('-X KUBE-SEP-SXIVWICOYRO3J4NJ');
  });

  it('cleans a 10k-service node without asking the table who refers to each chain', async () => {
    // The quadratic version called referencesTo (a scan of the whole table) for each of the 60k chains.
    let scans = 0;
    Object.defineProperty(InMemoryTables.prototype, 'referencesTo', {
      ...referencesTo,
      value: () => {
        scans++;
        throw new Error('referencesTo scans the whole table: not once per chain');
      },
    });
    const { ipt, calls, payloads } = recording({ saves: savedNodeTables(10_000) });
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    expect(scans).toBe(0);
    expect(calls).toEqual(['save filter', 'restore', 'save nat', 'restore', 'save mangle']);
    const natLines = (payloads[1] ?? '').split('\n');
    expect(natLines.filter((l) => l.startsWith('-X '))).toHaveLength(60_004);
    expect(natLines.filter((l) => l.startsWith('-D '))).toHaveLength(3);
  }, 60_000); // A 10k-service table: seconds on a busy 2-core runner; the assertion is the number of scans.
});
