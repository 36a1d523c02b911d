import { planTableCleanup, renderCleanupRestore } from './cleanup-plan.js';
import { parseSavedTable, type SavedRule, type SavedTable } from './cleanup-saved-table.js';
import { savedNodeTables } from './cleanup-test-table.js';

async function nat(save: string): Promise<SavedTable> {
  const saved = await parseSavedTable(save, 'nat');
  if (!saved) throw new Error('no nat table');
  return saved;
}

/** The same table whose rules count every read of their target: how many times the planner looked at a rule. */
function counting(saved: SavedTable): { table: SavedTable; reads: () => number } {
  let reads = 0;
  const rules = saved.rules.map((r): SavedRule => ({
    chain: r.chain,
    text: r.text,
    get target() {
      reads++;
      return r.target;
    },
  }));
  return { table: { ...saved, rules }, reads: () => reads };
}

describe('planTableCleanup', () => {
  it('decides a 10k-service nat table (60k chains, 110k rules) looking at each rule once', async () => {
    const saved = await nat(savedNodeTables(10_000).nat);
    expect(saved.rules.length).toBeGreaterThan(110_000);
    const { table, reads } = counting(saved);
    const plan = planTableCleanup(table);
    // The quadratic version asked "who refers to this chain?" of the whole table for each of the 60k chains.
    expect(reads()).toBe(saved.rules.length);
    expect(plan.kept).toEqual([]);
    expect(plan.deletable).toHaveLength(60_000 + 4); // SVC + SEP chains, KUBE-SERVICES/-NODEPORTS/-POSTROUTING/-MARK-MASQ
    expect(plan.deletable).not.toContain('CNI-HOSTPORT');
    expect(plan.jumps.map((r) => `${r.chain} -> ${r.target}`)).toEqual(['PREROUTING -> KUBE-SERVICES', 'OUTPUT -> KUBE-SERVICES', 'POSTROUTING -> KUBE-POSTROUTING']);
  }, 60_000); // Builds and reads a 10k-service table: seconds on a busy 2-core runner; the assertion is the count of reads.

  it('keeps everything a foreign rule reaches through a long run of owned chains, visiting each chain once', async () => {
    // Adversarial for a fixpoint loop over the chain list: a foreign rule jumps to the LAST chain in
    // save order, and each chain jumps to the one before it, so a pass over the list keeps one more.
    const depth = 3_000;
    const name = (i: number) => `KUBE-SVC-${String(i).padStart(16, '0')}`;
    const lines = ['*nat', ':PREROUTING ACCEPT [0:0]', ':CNI-X - [0:0]', ':KUBE-SEP-0000000000000000 - [0:0]'];
    for (let i = 0; i < depth; i++) lines.push(`:${name(i)} - [0:0]`);
    lines.push(`-A CNI-X -j ${name(depth - 1)}`);
    for (let i = depth - 1; i > 0; i--) lines.push(`-A ${name(i)} -j ${name(i - 1)}`);
    lines.push('COMMIT', '');
    const { table, reads } = counting(await nat(lines.join('\n')));
    const plan = planTableCleanup(table);
    expect(reads()).toBe(depth);
    expect(plan.kept).toHaveLength(depth);
    expect(plan.kept.find((k) => k.chain === name(depth - 1))?.referencedFrom).toEqual(['CNI-X']);
    expect(plan.kept.find((k) => k.chain === name(0))?.referencedFrom).toEqual([name(1)]);
    expect(plan.deletable).toEqual(['KUBE-SEP-0000000000000000']);
  });

  it('treats a jump with other arguments than ours as foreign: it stays, and so does its target', async () => {
    const saved = await nat(
      [
        '*nat',
        ':PREROUTING ACCEPT [0:0]',
        ':OUTPUT ACCEPT [0:0]',
        ':KUBE-SERVICES - [0:0]',
        '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        '-A OUTPUT -m comment --comment "someone else\'s portals" -j KUBE-SERVICES',
        'COMMIT',
        '',
      ].join('\n'),
    );
    const plan = planTableCleanup(saved);
    expect(plan.jumps.map((r) => r.chain)).toEqual(['PREROUTING']);
    expect(plan.kept).toEqual([{ chain: 'KUBE-SERVICES', referencedFrom: ['OUTPUT'] }]);
    expect(plan.deletable).toEqual([]);
  });

  it('removes every copy of a duplicated jump, and a comment that only looks like a jump is not one', async () => {
    const saved = await nat(
      [
        '*nat',
        ':PREROUTING ACCEPT [0:0]',
        ':CNI-X - [0:0]',
        ':KUBE-MARK-MASQ - [0:0]',
        ':KUBE-SERVICES - [0:0]',
        '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        '-A CNI-X -m comment --comment "x -j KUBE-MARK-MASQ" -j RETURN',
        'COMMIT',
        '',
      ].join('\n'),
    );
    const plan = planTableCleanup(saved);
    expect(plan.jumps).toHaveLength(2);
    expect(plan.kept).toEqual([]);
    expect(renderCleanupRestore(plan)?.split('\n')).toEqual([
      '*nat',
      '-D PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-D PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      ':KUBE-MARK-MASQ - [0:0]',
      ':KUBE-SERVICES - [0:0]',
      '-X KUBE-MARK-MASQ',
      '-X KUBE-SERVICES',
      'COMMIT',
      '',
    ]);
  });
});

describe('parseSavedTable', () => {
  it('hands the event loop back while it reads a large save (so SIGTERM is handled during --cleanup)', async () => {
    const save = savedNodeTables(2_000).nat;
    let turns = 0;
    let parsing = true;
    const tick = (): void => {
      if (!parsing) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const saved = await parseSavedTable(save, 'nat');
    parsing = false;
    expect(saved?.rules.length).toBeGreaterThan(20_000);
    expect(turns).toBeGreaterThanOrEqual(2);
  });

  it('reads the target outside quotes: directly when it follows the last quote, else by the quote-aware split', async () => {
    const saved = await parseSavedTable(
      [
        '*nat',
        ':X - [0:0]',
        '-A X -s 10.0.0.1/32 -j KUBE-MARK-MASQ',
        '-A X -m comment --comment "a -j KUBE-SEP-A" -j RETURN',
        '-A X -j RETURN -m comment --comment "b -j KUBE-SEP-B"',
        '-A X -m comment --comment "c -j KUBE-SEP-C"',
        '-A X -p tcp -m tcp -j DNAT --to-destination 10.0.0.2:80',
        'COMMIT',
        '',
      ].join('\n'),
      'nat',
    );
    expect(saved?.rules.map((r) => r.target)).toEqual(['KUBE-MARK-MASQ', 'RETURN', 'RETURN', undefined, 'DNAT']);
  });

  it('reads only the asked table, and undefined when the save has none', async () => {
    const { nat: natText, filter } = savedNodeTables(1);
    const both = natText + filter;
    expect((await parseSavedTable(both, 'filter'))?.chains).toEqual(['INPUT', 'FORWARD', 'OUTPUT', 'KUBE-FIREWALL', 'KUBE-FORWARD', 'KUBE-SERVICES']);
    expect(await parseSavedTable(filter, 'mangle')).toBeUndefined();
  });
});
