import type { IPFamily } from '@kube-proxy/core';
import { RecordingLogger, FakeClock } from '@kube-proxy/core/testing';
import { IptablesError } from './errors.js';
import { IPTABLES_FLUSH_SETTLE_MS, IptablesFlushMonitor, type TableFlushFinding } from './flush-monitor.js';
import type { IptablesInterface, RuleSpec, Table } from './types.js';

/** A few tables of chains holding rules (as `args` joined by spaces): just what the monitor asks. */
class TinyTables implements IptablesInterface {
  readonly family: IPFamily = 'IPv4';
  readonly description = 'tiny';
  readonly chains = new Map<string, string[]>();
  checks = 0;
  readonly canaryChecks: Table[] = [];
  failChecks = false;
  /** Another process holds the xtables lock: every check fails with exit 4 (iptables' RESOURCE_PROBLEM). */
  lockHeld = false;
  private readonly busy = (): IptablesError =>
    new IptablesError('iptables-legacy: exit 4', 4, 'Another app is currently holding the xtables lock. Stopped waiting after 5s.');

  add(table: Table, chain: string, args: readonly string[] = []): void {
    const key = `${table}/${chain}`;
    const rules = this.chains.get(key) ?? [];
    if (args.length > 0) rules.push(args.join(' '));
    this.chains.set(key, rules);
  }
  /** `iptables -t TABLE -F`: every chain of the table emptied, none deleted. */
  flushTable(table: Table): void {
    for (const [key, rules] of this.chains) if (key.startsWith(`${table}/`)) rules.length = 0;
  }
  // The monitor only reads and creates chains: anything else is a bug in it.
  restore(): Promise<void> {
    return Promise.reject(new Error('unexpected restore'));
  }
  async saveTable(): Promise<string> {
    return '';
  }
  async ensureChain(table: Table, chain: string): Promise<boolean> {
    const existed = this.chains.has(`${table}/${chain}`);
    if (!existed) this.add(table, chain);
    return existed;
  }
  ensureRule(): Promise<boolean> {
    return Promise.reject(new Error('unexpected ensureRule'));
  }
  deleteRule(): Promise<void> {
    return Promise.reject(new Error('unexpected deleteRule'));
  }
  flushChain(): Promise<void> {
    return Promise.reject(new Error('unexpected flushChain'));
  }
  async deleteChain(table: Table, chain: string): Promise<void> {
    this.chains.delete(`${table}/${chain}`);
  }
  async chainExists(table: Table, chain: string): Promise<boolean> {
    this.canaryChecks.push(table);
    if (this.lockHeld) throw this.busy();
    return this.chains.has(`${table}/${chain}`);
  }
  async missingRules(table: Table, rules: readonly RuleSpec[]): Promise<RuleSpec[]> {
    this.checks++;
    if (this.lockHeld) throw this.busy();
    if (this.failChecks) throw new Error('Another app is currently holding the xtables lock');
    return rules.filter((r) => !(this.chains.get(`${table}/${r.chain}`) ?? []).includes(r.args.join(' ')));
  }
}

const JUMP: RuleSpec = { chain: 'PREROUTING', args: ['-j', 'KUBE-SERVICES'] };
const SENTINEL: RuleSpec = { chain: 'KUBE-SERVICES', args: ['-j', 'KUBE-NODEPORTS'] };
const FILTER_JUMP: RuleSpec = { chain: 'INPUT', args: ['-j', 'KUBE-FIREWALL'] };

const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 100) {
    clock.advance(Math.min(100, ms - t));
    await flush();
  }
}

function setup(withCanary = true) {
  const clock = new FakeClock();
  const ipt = new TinyTables();
  const logger = new RecordingLogger();
  for (const chain of ['PREROUTING', 'KUBE-SERVICES', 'KUBE-NODEPORTS']) ipt.add('nat', chain);
  ipt.add('nat', 'PREROUTING', JUMP.args);
  ipt.add('nat', 'KUBE-SERVICES', SENTINEL.args);
  ipt.add('filter', 'INPUT', FILTER_JUMP.args);
  const found: (readonly TableFlushFinding[])[] = [];
  const monitor = new IptablesFlushMonitor({
    iptables: ipt,
    clock,
    logger,
    intervalMs: 30_000,
    onFlush: (f) => found.push(f),
    tables: ['mangle', 'nat', 'filter'],
    ...(withCanary ? { canaryChain: 'KUBE-PROXY-CANARY' } : {}),
  });
  monitor.setExpectedRules(
    new Map<Table, RuleSpec[]>([
      ['nat', [JUMP, SENTINEL]],
      ['filter', [FILTER_JUMP]],
    ]),
  );
  return { clock, ipt, logger, monitor, found };
}

describe('IptablesFlushMonitor', () => {
  it('notices `iptables -t nat -F` (rules gone, every chain and canary kept) at the next interval', async () => {
    const { clock, ipt, logger, monitor, found } = setup();
    await monitor.start();
    ipt.flushTable('nat');
    expect(await ipt.chainExists('nat', 'KUBE-PROXY-CANARY')).toBe(true);
    await advance(clock, 29_900);
    expect(found).toHaveLength(0);
    await advance(clock, 100 + IPTABLES_FLUSH_SETTLE_MS + 100);
    expect(found).toEqual([[{ table: 'nat', canaryMissing: false, missingRules: [JUMP, SENTINEL] }]]);
    expect(monitor.flushesDetected).toBe(1);
    expect(monitor.ruleFlushesDetected).toBe(1);
    const warned = logger.entries.find((e) => e.level === 'warn' && e.message.includes('removed behind our back'));
    expect(warned?.meta).toMatchObject({ table: 'nat', missingRules: ['nat PREROUTING -j KUBE-SERVICES', 'nat KUBE-SERVICES -j KUBE-NODEPORTS'] });
    monitor.stop();
  });

  it('notices a flush of one of its chains that keeps the jump (`iptables -t nat -F KUBE-SERVICES`)', async () => {
    const { ipt, monitor, found, clock } = setup();
    await monitor.ensureCanaries();
    ipt.chains.set('nat/KUBE-SERVICES', []);
    const checked = monitor.check();
    await advance(clock, IPTABLES_FLUSH_SETTLE_MS + 200);
    await expect(checked).resolves.toBe(true);
    expect(found[0]).toEqual([{ table: 'nat', canaryMissing: false, missingRules: [SENTINEL] }]);
  });

  it('reports every table a flush hit, once, after it stopped spreading', async () => {
    const { ipt, monitor, found, clock } = setup();
    await monitor.ensureCanaries();
    ipt.flushTable('nat');
    const checked = monitor.check();
    await advance(clock, 300);
    ipt.flushTable('filter'); // `iptables -F` goes table by table
    await advance(clock, IPTABLES_FLUSH_SETTLE_MS + 200);
    await expect(checked).resolves.toBe(true);
    expect(found).toHaveLength(1);
    expect(found[0]?.map((f) => f.table)).toEqual(['nat', 'filter']);
  });

  it('forgets the expected rules once it reported them, so the repair is not reported again', async () => {
    const { ipt, monitor, found, clock } = setup();
    await monitor.start();
    ipt.flushTable('nat');
    await advance(clock, 30_000 + IPTABLES_FLUSH_SETTLE_MS + 200);
    expect(found).toHaveLength(1);
    expect(monitor.expectedRules('nat')).toEqual([]);
    await advance(clock, 60_000); // the proxier has not resynced yet (slow full sync)
    expect(found).toHaveLength(1);
    monitor.stop();
  });

  it('does not report what came back while it waited (the proxier moved on, or someone restored it)', async () => {
    const { ipt, monitor, found, clock } = setup();
    await monitor.ensureCanaries();
    ipt.chains.set('nat/KUBE-SERVICES', []);
    const checked = monitor.check();
    await advance(clock, 200);
    ipt.add('nat', 'KUBE-SERVICES', SENTINEL.args);
    await advance(clock, IPTABLES_FLUSH_SETTLE_MS + 200);
    await expect(checked).resolves.toBe(false);
    expect(found).toHaveLength(0);
  });

  it('is quiet while everything is there: no resync, one process per table and interval', async () => {
    const { clock, ipt, monitor, found } = setup();
    await monitor.start();
    await advance(clock, 95_000);
    expect(found).toHaveLength(0);
    // 3 rounds × (nat, filter) rule checks; the canary only where no rules are expected (mangle).
    expect(ipt.checks).toBe(3 * 2);
    expect(ipt.canaryChecks).toEqual(['mangle', 'mangle', 'mangle']);
    monitor.stop();
  });

  it('treats a check that cannot be made as "unknown", not as a flush', async () => {
    const { ipt, monitor, found, logger } = setup();
    await monitor.ensureCanaries();
    ipt.failChecks = true;
    await expect(monitor.check()).resolves.toBe(false);
    expect(found).toHaveLength(0);
    expect(logger.has('warn', 'Could not check iptables rules')).toBe(true);
  });

  it('gives up the round at the first check that finds the xtables lock held, so it does not hold back a restore', async () => {
    const { ipt, monitor, found, logger } = setup();
    await monitor.ensureCanaries();
    ipt.lockHeld = true;
    await expect(monitor.check()).resolves.toBe(false);
    // mangle's canary check waited out the lock; nat's and filter's rule checks were not made.
    expect(ipt.canaryChecks).toEqual(['mangle']);
    expect(ipt.checks).toBe(0);
    expect(found).toHaveLength(0);
    expect(logger.entries.filter((e) => e.level === 'warn').map((e) => e.message)).toEqual(['Could not check for iptables canary']);
    // Next round, lock free: every table is checked again.
    ipt.lockHeld = false;
    await expect(monitor.check()).resolves.toBe(false);
    expect(ipt.checks).toBe(2);
  });

  it('works without a canary (rules only), as the userspace proxier uses it', async () => {
    const { ipt, monitor, found, clock } = setup(false);
    await monitor.start();
    expect(await ipt.chainExists('nat', 'KUBE-PROXY-CANARY')).toBe(false);
    ipt.flushTable('filter');
    await advance(clock, 30_000 + IPTABLES_FLUSH_SETTLE_MS + 200);
    expect(found).toEqual([[{ table: 'filter', canaryMissing: false, missingRules: [FILTER_JUMP] }]]);
    monitor.stop();
  });
});
