import type { Clock, Logger, TimerHandle } from '@kube-proxy/core';
import { isResourceError, type IptablesInterface, type Table } from '@kube-proxy/core';
import { CANARY_TABLES, KUBE_PROXY_CANARY_CHAIN } from '../render/index.js';

/** Upstream's iptablesFlushTimeout: how long to wait for a flush in progress to finish. */
export const IPTABLES_FLUSH_TIMEOUT_MS = 5000;
/** Upstream's iptablesFlushPollTime. */
export const IPTABLES_FLUSH_POLL_MS = 100;
/**
 * A flush that has stopped spreading for this long is taken as finished. Upstream waits the full
 * 5 s whenever some canary survives; since we also notice partial flushes (nat only), waiting that
 * long would keep Services down 5 s past detection for a flush that was over at once.
 */
export const IPTABLES_FLUSH_SETTLE_MS = 500;

export interface CanaryMonitorOptions {
  readonly iptables: IptablesInterface;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How often to look for the canaries (upstream: syncPeriod). */
  readonly intervalMs: number;
  /** Called after a flush was detected and the canaries were recreated (the proxier forces a full sync). */
  readonly onFlush: () => void;
  /** Default: mangle, nat, filter (upstream's order). */
  readonly tables?: readonly Table[];
  readonly chain?: string;
}

type CanaryState = 'present' | 'missing' | 'unknown';

/**
 * Detects that someone flushed iptables (firewalld reload, `iptables -F`, …): upstream's
 * utiliptables Monitor. A `KUBE-PROXY-CANARY` chain is kept in mangle, nat and filter; every
 * interval they are looked for. When one is gone, it waits (polling every 100 ms, at most 5 s) for a
 * flush in progress to finish — all gone, or no change for 500 ms — then recreates them and calls onFlush.
 *
 * Difference from upstream: upstream only polls the first table (mangle), so a flush of nat alone
 * goes unnoticed (kubernetes#133767). Here every table's canary is checked each round.
 */
export class CanaryMonitor {
  private readonly iptables: IptablesInterface;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly intervalMs: number;
  private readonly onFlush: () => void;
  private readonly tables: readonly Table[];
  private readonly chain: string;
  private timer: TimerHandle | undefined;
  private running = false;
  private checking = false;
  /** Number of flushes detected so far. */
  flushesDetected = 0;

  constructor(options: CanaryMonitorOptions) {
    this.iptables = options.iptables;
    this.clock = options.clock;
    this.logger = options.logger;
    this.intervalMs = options.intervalMs;
    this.onFlush = options.onFlush;
    this.tables = options.tables ?? CANARY_TABLES;
    this.chain = options.chain ?? KUBE_PROXY_CANARY_CHAIN;
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

  /** Creates any missing canary. Returns false when one could not be created (logged). */
  async ensureCanaries(): Promise<boolean> {
    let ok = true;
    for (const table of this.tables) {
      try {
        await this.iptables.ensureChain(table, this.chain);
      } catch (err) {
        ok = false;
        this.logger.warn('Could not set up iptables canary', { table, chain: this.chain, error: String(err) });
      }
    }
    return ok;
  }

  /**
   * One monitoring round. When a canary is missing: wait for the flush to complete, recreate the
   * canaries, call onFlush and resolve true. Otherwise resolve false.
   */
  async check(): Promise<boolean> {
    if (this.checking) return false;
    this.checking = true;
    try {
      const states = await this.states();
      const missing = this.tables.filter((_, i) => states[i] === 'missing');
      if (missing.length === 0) return false;
      this.logger.verbose('iptables canary deleted', { tables: missing, chain: this.chain });

      // Wait for a flush in progress (a firewall reload flushes table after table) to finish, so we
      // reload once: until every canary is gone, or the set of missing ones stops changing.
      const deadline = this.clock.now() + IPTABLES_FLUSH_TIMEOUT_MS;
      let allGone = states.every((s) => s === 'missing');
      let lastSeen = states.join(',');
      let settledSince = this.clock.now();
      while (!allGone && this.clock.now() < deadline && this.clock.now() - settledSince < IPTABLES_FLUSH_SETTLE_MS) {
        await this.sleep(IPTABLES_FLUSH_POLL_MS);
        const now = await this.states();
        allGone = now.every((s) => s === 'missing');
        const seen = now.join(',');
        if (seen !== lastSeen) {
          lastSeen = seen;
          settledSince = this.clock.now();
        }
      }
      if (!allGone) this.logger.warn('Inconsistent iptables state detected', { missing, chain: this.chain });

      this.flushesDetected++;
      await this.ensureCanaries();
      this.logger.verbose('Reloading after iptables flush');
      this.onFlush();
      return true;
    } finally {
      this.checking = false;
    }
  }

  private async states(): Promise<CanaryState[]> {
    const states: CanaryState[] = [];
    for (const table of this.tables) {
      try {
        states.push((await this.iptables.chainExists(table, this.chain)) ? 'present' : 'missing');
      } catch (err) {
        // A resource error (lock contention) or a failing binary says nothing about the canary.
        this.logger.warn('Could not check for iptables canary', {
          table,
          chain: this.chain,
          resourceError: isResourceError(err),
          error: String(err),
        });
        states.push('unknown');
      }
    }
    return states;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.check()
        .catch((err: unknown) => this.logger.error('iptables canary check failed', { error: String(err) }))
        .finally(() => this.schedule());
    }, this.intervalMs);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.clock.setTimeout(resolve, ms);
    });
  }
}
