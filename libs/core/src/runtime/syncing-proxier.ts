import type { ConntrackCleaner } from '../conntrack/conntrack-cleaner.js';
import { writeDryRunBlock } from '../contracts/dry-run-block.js';
import type { TextSink } from '../contracts/proxy-context.js';
import type { Clock } from '../host/clock.js';
import type { Logger } from '../host/logger.js';
import { BoundedFrequencyRunner } from './bounded-frequency-runner.js';
import { ProxierBase, type ProxierBaseOptions } from './proxier-base.js';
import { publishSuccessfulSync } from './report-synced.js';
import { FULL_SYNC_PERIOD_MS, SyncPolicy, type SyncTicket } from './sync-policy.js';
import type { FlushMonitor, SyncedResult, SyncRequest, SyncResult, SyncStats } from './sync-types.js';

/** Upstream's burstSyncs. */
export const BURST_SYNCS = 2;
/** Service ports one sync may leave out after the kernel refused a line of theirs (each costs a retried full sync). */
export const MAX_IMMEDIATE_RETRIES = 8;

export interface SyncingProxierOptions extends ProxierBaseOptions {
  readonly clock: Clock;
  /** A failed sync is retried this much later (upstream: syncPeriod). */
  readonly syncPeriodMs: number;
  /** Syncs are at least this far apart, after `burstSyncs` quick ones (upstream: minSyncPeriod). */
  readonly minSyncPeriodMs: number;
  /** The runner syncs at least this often. Default: the full-sync period (1 h). */
  readonly maxSyncIntervalMs?: number;
  readonly burstSyncs?: number;
  /** Every sync is a full one (IPVS reads the kernel back each time; userspace reconciles every socket). */
  readonly alwaysFull?: boolean;
  /**
   * Observe each sync's duration also as full/partial (sync_full/partial_proxy_rules_duration_seconds).
   * Default true; false for IPVS, whose upstream proxier observes only the overall histogram.
   */
  readonly durationByKind?: boolean;
  /** Stale UDP conntrack entries are cleared after each successful sync (absent: no cleanup, e.g. --dry-run). */
  readonly conntrack?: ConntrackCleaner;
  /**
   * The verbose line that ends every sync attempt. Default upstream's iptables/nftables wording,
   * `SyncProxyRules complete`; IPVS keeps upstream's IPVS wording, `syncProxyRules complete`, which
   * log queries match (our IPVS e2e does).
   */
  readonly syncCompleteMessage?: string;
  /** --dry-run: where each successful sync's output goes (absent outside a dry run). */
  readonly dryRunSink?: TextSink;
  /** Append the family to the dry-run header (two proxiers share one sink). */
  readonly tagDryRunOutput?: boolean;
}

/**
 * The one sync engine: upstream's syncProxyRules skeleton, written once for every mode. It gates on
 * the initial lists, decides full vs partial (SyncPolicy), drains the trackers, publishes the pending
 * counts, times the sync, retries a failure after syncPeriod as a full sync, reports a success (latency,
 * health, timestamps, health-check ports), clears stale conntrack entries and streams the dry-run
 * output with back-pressure. Syncs never overlap. A backend supplies `syncOnce`: render and apply,
 * and say what it did.
 */
export abstract class SyncingProxier extends ProxierBase {
  abstract readonly stats: SyncStats;
  protected readonly runner: BoundedFrequencyRunner;
  protected readonly logger: Logger;
  protected readonly clock: Clock;
  protected readonly syncPeriodMs: number;
  private readonly policy: SyncPolicy;
  private readonly modeName: string;
  private readonly durationByKind: boolean;
  private readonly conntrack: ConntrackCleaner | undefined;
  private readonly dryRunSink: TextSink | undefined;
  private readonly tagDryRunOutput: boolean;
  private flushMonitor: FlushMonitor | undefined;
  private readonly syncCompleteMessage: string;
  private ticket: SyncTicket | undefined;
  private syncing: Promise<void> = Promise.resolve();

  protected constructor(options: SyncingProxierOptions) {
    super(options);
    this.modeName = options.mode;
    this.logger = options.logger;
    this.clock = options.clock;
    this.syncPeriodMs = options.syncPeriodMs;
    this.policy = new SyncPolicy(options.alwaysFull ?? false);
    this.durationByKind = options.durationByKind ?? true;
    this.conntrack = options.conntrack;
    this.dryRunSink = options.dryRunSink;
    this.tagDryRunOutput = options.tagDryRunOutput ?? false;
    this.syncCompleteMessage = options.syncCompleteMessage ?? 'SyncProxyRules complete';
    this.runner = new BoundedFrequencyRunner({
      name: `${options.mode}-sync-runner-${options.family}`,
      fn: () => this.syncProxyRules(),
      minIntervalMs: options.minSyncPeriodMs,
      maxIntervalMs: options.maxSyncIntervalMs ?? FULL_SYNC_PERIOD_MS,
      burstRuns: options.burstSyncs ?? BURST_SYNCS,
      clock: options.clock,
      logger: options.logger,
    });
  }

  /** The backend's datapath step: render and apply for `request`, and say what it did. */
  protected abstract syncOnce(request: SyncRequest): Promise<SyncResult>;

  /**
   * The monitor that notices our rules vanished and forces a resync (set in the backend's constructor:
   * it calls back into the proxier). Started with the sync loop, stopped with the proxier.
   */
  protected watchForFlushes(monitor: FlushMonitor): void {
    this.flushMonitor = monitor;
  }

  /** After every sync attempt, with its outcome (e.g. forget what a failed apply may have half-written). */
  protected afterSync(_succeeded: boolean): void {
    // Nothing by default.
  }

  /** The flush monitor starts with the loop, in every mode and in --dry-run (whose kernel is in memory). */
  protected override async beforeLoop(): Promise<void> {
    await this.flushMonitor?.start();
  }

  protected onStop(): void {
    this.flushMonitor?.stop();
  }

  /** Asks for the next sync to be a full one (a flush was noticed, the local detector changed, …). */
  protected requestFullSync(): void {
    this.policy.requestFullSync();
  }

  /** Whether a full sync was asked for since the running sync began (its success must not clear it). */
  protected fullSyncRequestedDuringSync(): boolean {
    return this.ticket !== undefined && this.policy.requestedSince(this.ticket);
  }

  /** Whether a full sync is owed now. */
  protected get fullSyncPending(): boolean {
    return this.policy.fullSyncPending;
  }

  /** One sync now (the runner calls it; tests and benchmarks may call it directly); never overlapping another. */
  syncProxyRules(): Promise<void> {
    const run = this.syncing.then(() => this.runSync());
    this.syncing = run.catch(() => undefined);
    return run;
  }

  private async runSync(): Promise<void> {
    if (this.stopped) return;
    // Don't sync rules till we've received services and endpoints.
    if (!this.state.isInitialized()) {
      this.logger.verbose(`Not syncing ${this.modeName} rules until Services and Endpoints have been received from master`);
      return;
    }
    const start = this.clock.now();
    const cpuStart = process.cpuUsage();
    const ticket = this.policy.begin(start, this.state.takeTopologyChanged());
    this.ticket = ticket;
    const applied = this.state.applyPendingChanges();
    this.observers.metrics?.serviceChangesPending(this.state.pendingServiceChanges());
    this.observers.metrics?.endpointChangesPending(this.state.pendingEndpointChanges());
    this.logger.verbose(`Syncing ${this.modeName} rules`, { fullSync: ticket.full });
    let success = false;
    try {
      const { result, request } = await this.attempts({ full: ticket.full, applied, start, attempt: 0 });
      if (result.outcome === 'synced') {
        this.policy.succeeded(ticket, start);
        await this.synced(result, request);
        success = true;
      }
    } catch (err) {
      this.logger.error(`Failed to sync ${this.modeName} rules`, { error: err instanceof Error ? err.message : String(err) });
    } finally {
      this.ticket = undefined;
      this.finish(ticket, start, success, process.cpuUsage(cpuStart));
    }
  }

  /** The first attempt, then at once a full one for each `retry` (a quarantined service port), at most MAX_IMMEDIATE_RETRIES. */
  private async attempts(first: SyncRequest): Promise<{ result: SyncResult; request: SyncRequest }> {
    let request = first;
    let result = await this.syncOnce(request);
    for (let attempt = 1; result.outcome === 'retry' && attempt <= MAX_IMMEDIATE_RETRIES && !this.stopped; attempt++) {
      request = { ...first, full: true, attempt };
      result = await this.syncOnce(request);
    }
    return { result, request };
  }

  /**
   * Upstream's order after a successful sync: stats, report, conntrack cleanup, dry-run output, first
   * sync done. `request` is the attempt that succeeded (a retry is a full one).
   */
  private async synced(result: SyncedResult, request: SyncRequest): Promise<void> {
    const now = this.clock.now();
    const stats = this.stats;
    stats.syncs++;
    if (request.full) stats.fullSyncs++;
    else stats.partialSyncs++;
    stats.lastSuccessfulSyncTime = now;
    if (result.noLocalEndpoints) stats.noLocalEndpoints = { ...result.noLocalEndpoints };
    const healthChecks = { services: this.state.healthCheckNodePorts(), localEndpoints: this.state.localReadyEndpoints() };
    await publishSuccessfulSync(
      this.observers,
      {
        family: this.family,
        applied: request.applied,
        now,
        ...(result.noLocalEndpoints ? { noLocalEndpoints: result.noLocalEndpoints } : {}),
        healthChecks,
        ...(result.publish ? { modeMetrics: result.publish } : {}),
      },
      this.logger,
    );
    // The first sync reconciles with the kernel's table (a restart keeps flows of unchanged endpoints).
    if (this.conntrack) await this.conntrack.cleanAfterSync(this.state.serviceMap, this.state.endpointsMap, request.applied);
    if (this.dryRunSink && result.dryRunOutput) await this.writeDryRun(this.dryRunSink, result, request.full, now);
    if (!this.first.settled) this.first.resolve();
    if (result.retryAfterMs !== undefined && !this.stopped) this.runner.retryAfter(result.retryAfterMs);
  }

  /**
   * `cpu` is this process's CPU time over the sync: our own compute, apart from the kernel tools, which
   * run as child processes (it also counts whatever else the process did meanwhile, e.g. informer events).
   */
  private finish(ticket: SyncTicket, start: number, success: boolean, cpu: NodeJS.CpuUsage): void {
    this.stats.lastSyncDurationMs = this.clock.now() - start;
    const kind = this.durationByKind ? (ticket.full ? 'full' : 'partial') : undefined;
    this.observers.metrics?.syncDuration(this.family, this.stats.lastSyncDurationMs / 1000, kind);
    if (!success) {
      this.stats.failedSyncs++;
      this.policy.failed();
      this.logger.info('Sync failed', { retryingTimeMs: this.syncPeriodMs });
      if (!this.stopped) this.runner.retryAfter(this.syncPeriodMs);
    }
    this.afterSync(success);
    const cpuMs = Math.round((cpu.user + cpu.system) / 100) / 10;
    this.logger.verbose(this.syncCompleteMessage, { elapsedMs: this.stats.lastSyncDurationMs, cpuMs });
  }

  /** `# sync N LABEL TIME[ FAMILY]`, then the backend's pieces, waiting for stdout between them. */
  private writeDryRun(sink: TextSink, result: SyncedResult, full: boolean, now: number): Promise<void> {
    const tag = this.tagDryRunOutput ? ` ${this.family}` : '';
    const label = result.dryRunLabel ?? (full ? 'full' : 'partial');
    const header = result.dryRunHeader ?? `# sync ${this.stats.syncs} ${label} ${new Date(now).toISOString()}${tag}\n`;
    const body = result.dryRunOutput as Iterable<string>;
    return writeDryRunBlock(sink, (function* () {
      yield header;
      yield* body;
    })());
  }
}

