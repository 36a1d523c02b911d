/**
 * Flush detection for the backends that program iptables: once per interval, notice that someone
 * removed what a proxier installed, and ask the proxier for a full resync.
 *
 * Two signals, per watched table:
 * - a canary chain (upstream's utiliptables.Monitor and its KUBE-PROXY-CANARY): gone after
 *   `iptables -F -X`, a firewall reload that replaces the tables, or `-X` of the chain; looked for
 *   in the tables where no rules are expected (mangle in iptables mode; any table before the
 *   first sync);
 * - the rules the proxier says must be there (setExpectedRules): its jumps from the built-in chains
 *   and a sentinel rule of each of its chains that is never empty. These catch what the canary
 *   cannot: `iptables -t nat -F` without `-X` removes every rule, PREROUTING/OUTPUT's jumps
 *   included, but keeps every chain, canary included, so upstream leaves every Service broken until
 *   its hourly full sync; `iptables -t nat -F KUBE-SERVICES` keeps even the jumps.
 *
 * When something is missing, a flush may still be in progress (a firewall reload flushes table after
 * table), so it polls every 100 ms until every table is hit or nothing changed for 500 ms (at most
 * 5 s), confirms that something is still missing, then recreates the canaries, forgets the expected
 * rules (the proxier sets them again after the resync it is asked for) and calls onFlush.
 *
 * Cost per round: one process per watched table, whatever the number of Services: an
 * `iptables-restore` of `-C` lines where rules are expected (IptablesInterface.missingRules; it
 * stands in for the canary there, see tableState), else `iptables -S CANARY`. A missing rule costs
 * one more process in the round that finds it.
 */
import type { Clock, TimerHandle, Logger } from '@kube-proxy/core';
import { isResourceError } from './errors.js';
import { joinArgs } from './rule-text.js';
import type { IptablesInterface, RuleSpec, Table } from './types.js';

/** Upstream's iptablesFlushTimeout: how long to wait for a flush in progress to finish. */
export const IPTABLES_FLUSH_TIMEOUT_MS = 5000;
/** Upstream's iptablesFlushPollTime. */
export const IPTABLES_FLUSH_POLL_MS = 100;
/**
 * A flush that has stopped spreading for this long is taken as finished. Upstream waits the full
 * 5 s whenever some canary survives; since partial flushes (nat only, rules only) are noticed too,
 * waiting that long would keep Services down 5 s past detection for a flush that was over at once.
 */
export const IPTABLES_FLUSH_SETTLE_MS = 500;

/** What one table was found missing. */
export interface TableFlushFinding {
  readonly table: Table;
  /** The canary chain is gone (only looked for in tables where no rules are expected). */
  readonly canaryMissing: boolean;
  /** Expected rules that are gone. */
  readonly missingRules: readonly RuleSpec[];
}

export interface IptablesFlushMonitorOptions {
  readonly iptables: IptablesInterface;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How often to look (upstream: syncPeriod). */
  readonly intervalMs: number;
  /** Called once per detected flush, after the canaries were recreated: the proxier forces a full sync. */
  readonly onFlush: (findings: readonly TableFlushFinding[]) => void;
  /** The tables watched (and, with canaryChain, given a canary), in the order they are checked. */
  readonly tables: readonly Table[];
  /** The canary chain kept in every watched table; none when unset (rules only). */
  readonly canaryChain?: string;
  /** What is watched, for log messages ("iptables rules", "userspace capture rules"). */
  readonly subject?: string;
}

type Presence = 'present' | 'missing' | 'unknown';

interface TableState {
  readonly table: Table;
  readonly presence: Presence;
  readonly canaryMissing: boolean;
  readonly missingRules: readonly RuleSpec[];
  /** A check failed because another process holds the xtables lock (a resource error). */
  readonly lockBusy: boolean;
}

/** `table CHAIN args…`, how a rule is named in logs. */
export function describeRule(table: Table, rule: RuleSpec): string {
  return `${table} ${rule.chain} ${joinArgs(rule.args)}`;
}

export class IptablesFlushMonitor {
  /** Number of flushes detected so far (canary or rules). */
  flushesDetected = 0;
  /** Of those, the ones where rules were missing (not only canaries). */
  ruleFlushesDetected = 0;

  protected readonly iptables: IptablesInterface;
  protected readonly clock: Clock;
  protected readonly logger: Logger;
  private readonly intervalMs: number;
  private readonly onFlush: (findings: readonly TableFlushFinding[]) => void;
  private readonly tables: readonly Table[];
  private readonly canaryChain: string | undefined;
  private readonly subject: string;
  private readonly expected = new Map<Table, readonly RuleSpec[]>();
  private timer: TimerHandle | undefined;
  private running = false;
  private checking = false;

  constructor(options: IptablesFlushMonitorOptions) {
    this.iptables = options.iptables;
    this.clock = options.clock;
    this.logger = options.logger;
    this.intervalMs = options.intervalMs;
    this.onFlush = options.onFlush;
    this.tables = options.tables;
    this.canaryChain = options.canaryChain;
    this.subject = options.subject ?? 'iptables rules';
  }

  /** Creates the canaries now (resolves when done), then checks every interval until stop(). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    await this.ensureCanaries();
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * The rules that must be in the kernel from now on, by table (replacing what was expected
   * before; a table not in `rules` expects nothing). Call it after a sync installed them: a rule
   * expected before it exists would read as a flush.
   */
  setExpectedRules(rules: ReadonlyMap<Table, readonly RuleSpec[]>): void {
    this.expected.clear();
    for (const [table, list] of rules) if (list.length > 0) this.expected.set(table, [...list]);
  }

  /** Expect no rules (until setExpectedRules). */
  clearExpectedRules(): void {
    this.expected.clear();
  }

  /** The rules currently expected in `table`. */
  expectedRules(table: Table): readonly RuleSpec[] {
    return this.expected.get(table) ?? [];
  }

  /** Creates any missing canary. Returns false when one could not be created (logged). */
  async ensureCanaries(): Promise<boolean> {
    if (this.canaryChain === undefined) return true;
    let ok = true;
    for (const table of this.tables) {
      try {
        await this.iptables.ensureChain(table, this.canaryChain);
      } catch (err) {
        ok = false;
        this.logger.warn('Could not set up iptables canary', { table, chain: this.canaryChain, error: String(err) });
      }
    }
    return ok;
  }

  /**
   * One monitoring round. When something is missing: wait for the flush to complete, confirm,
   * recreate the canaries, call onFlush and resolve true. Otherwise resolve false.
   */
  async check(): Promise<boolean> {
    if (this.checking) return false;
    this.checking = true;
    try {
      let states = await this.states();
      if (!states.some((s) => s.presence === 'missing')) return false;
      this.logger.verbose(`${this.subject}: something is missing, waiting for a flush in progress to finish`, {
        tables: states.filter((s) => s.presence === 'missing').map((s) => s.table),
      });

      // Wait for a flush in progress (a firewall reload flushes table after table) to finish, so we
      // reload once: until every table is hit, or what is missing stops changing.
      const deadline = this.clock.now() + IPTABLES_FLUSH_TIMEOUT_MS;
      const allGone = (list: readonly TableState[]): boolean => list.every((s) => s.presence === 'missing');
      let lastSeen = signature(states);
      let settledSince = this.clock.now();
      while (!allGone(states) && this.clock.now() < deadline && this.clock.now() - settledSince < IPTABLES_FLUSH_SETTLE_MS) {
        await this.sleep(IPTABLES_FLUSH_POLL_MS);
        states = await this.states();
        const seen = signature(states);
        if (seen !== lastSeen) {
          lastSeen = seen;
          settledSince = this.clock.now();
        }
      }

      // Still missing? (The proxier may have moved its expectations on, or someone put it back.)
      const hit = states.filter((s) => s.presence === 'missing');
      if (hit.length === 0) return false;
      if (!allGone(states)) {
        this.logger.warn('Inconsistent iptables state detected', { subject: this.subject, missing: hit.map((s) => s.table) });
      }
      for (const s of hit) {
        if (s.missingRules.length > 0) {
          this.logger.warn(`${this.subject} were removed behind our back (flushed?): forcing a full resync`, {
            table: s.table,
            missingRules: s.missingRules.map((r) => describeRule(s.table, r)),
            ...(s.canaryMissing ? { canaryChainMissing: this.canaryChain } : {}),
          });
        } else {
          this.logger.verbose('iptables canary deleted', { table: s.table, chain: this.canaryChain });
        }
      }

      this.flushesDetected++;
      if (hit.some((s) => s.missingRules.length > 0)) this.ruleFlushesDetected++;
      // Nothing is expected until the proxier has put it back (its next successful full sync).
      this.expected.clear();
      await this.ensureCanaries();
      this.logger.verbose(`Reloading after ${this.subject} were flushed`);
      this.onFlush(hit.map((s) => ({ table: s.table, canaryMissing: s.canaryMissing, missingRules: s.missingRules })));
      return true;
    } finally {
      this.checking = false;
    }
  }

  /**
   * Every table's state; once a check finds the xtables lock held by another process, the remaining
   * tables are "unknown" for this round. Each further check would wait out its own `-w` while holding
   * this family's command queue, and so hold back the proxier's restore behind it (with iptables-legacy
   * and three tables, a sync that should fail after one 5 s wait failed after three). Upstream's monitor
   * likewise gives up the round on a resource error and looks again at the next interval.
   */
  private async states(): Promise<TableState[]> {
    const states: TableState[] = [];
    for (const table of this.tables) {
      if (states.some((s) => s.lockBusy)) {
        states.push({ table, presence: 'unknown', canaryMissing: false, missingRules: [], lockBusy: false });
        continue;
      }
      states.push(await this.tableState(table));
    }
    return states;
  }

  private async tableState(table: Table): Promise<TableState> {
    let unknown = false;
    let lockBusy = false;
    let canaryMissing = false;
    const expected = this.expected.get(table);
    // Where rules are expected, their check subsumes the canary's: whatever removes the canary
    // (a flush with -X, a firewall reload replacing the table) also removes our jumps, and a jump
    // to a deleted chain reads as missing. One process per table either way, which matters for
    // iptables-legacy, where every process reads the whole table (~0.4 s for 10,000 Services in nat).
    if (this.canaryChain !== undefined && (expected === undefined || expected.length === 0)) {
      try {
        canaryMissing = !(await this.iptables.chainExists(table, this.canaryChain));
      } catch (err) {
        // A resource error (lock contention) or a failing binary says nothing about the canary.
        unknown = true;
        lockBusy = isResourceError(err);
        this.logger.warn('Could not check for iptables canary', {
          table,
          chain: this.canaryChain,
          resourceError: isResourceError(err),
          error: String(err),
        });
      }
    }
    let missingRules: readonly RuleSpec[] = [];
    if (expected !== undefined && expected.length > 0 && !lockBusy) {
      try {
        missingRules = await this.iptables.missingRules(table, expected);
      } catch (err) {
        unknown = true;
        lockBusy = isResourceError(err);
        this.logger.warn(`Could not check ${this.subject}`, { table, resourceError: isResourceError(err), error: String(err) });
      }
    }
    const presence: Presence = canaryMissing || missingRules.length > 0 ? 'missing' : unknown ? 'unknown' : 'present';
    return { table, presence, canaryMissing, missingRules, lockBusy };
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.check()
        .catch((err: unknown) => this.logger.error(`${this.subject}: flush check failed`, { error: String(err) }))
        .finally(() => this.schedule());
    }, this.intervalMs);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.clock.setTimeout(resolve, ms);
    });
  }
}

/** What was found, for telling whether a flush is still spreading. */
function signature(states: readonly TableState[]): string {
  return states.map((s) => `${s.presence}:${s.canaryMissing ? 'c' : ''}${s.missingRules.length}`).join(',');
}
