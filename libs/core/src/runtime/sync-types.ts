import type { ProxyMetrics } from '../observers/metrics/proxy-metrics.js';
import type { AppliedChanges } from '../semantics/tracking/types.js';

/** Services with no local endpoint for internal / external traffic (sync_proxy_rules_no_local_endpoints_total). */
export interface NoLocalEndpoints {
  readonly internal: number;
  readonly external: number;
}

/**
 * The counters every mode keeps, in one vocabulary (a backend's stats extend it with its own).
 * The engine (SyncingProxier) is their only writer.
 */
export interface SyncStats {
  /** Successful syncs (full + partial). */
  syncs: number;
  fullSyncs: number;
  partialSyncs: number;
  /** Sync attempts that ended without the rules in place, for any reason. */
  failedSyncs: number;
  /** Duration of the last sync attempt (ms, by the proxier's clock). */
  lastSyncDurationMs: number;
  /** When the last successful sync finished (ms since epoch), 0 before the first. */
  lastSuccessfulSyncTime: number;
  noLocalEndpoints: NoLocalEndpoints;
}

export function newSyncStats(): SyncStats {
  return {
    syncs: 0,
    fullSyncs: 0,
    partialSyncs: 0,
    failedSyncs: 0,
    lastSyncDurationMs: 0,
    lastSuccessfulSyncTime: 0,
    noLocalEndpoints: { internal: 0, external: 0 },
  };
}

/** What one sync asks of the backend's datapath step. */
export interface SyncRequest {
  /** Rewrite everything (start, after a failure, a flush, a topology change, hourly) or only what changed. */
  readonly full: boolean;
  /** The changes this sync drained from the trackers (a retry within the same sync sees the same ones). */
  readonly applied: AppliedChanges;
  /** When the sync started (ms, by the proxier's clock). */
  readonly start: number;
  /** 0 for the first attempt; n for the n-th immediate retry after the step answered `retry`. */
  readonly attempt: number;
}

/** The rules are in place. */
export interface SyncedResult {
  readonly outcome: 'synced';
  /** Published as sync_proxy_rules_no_local_endpoints_total; omitted by a mode that has no such notion. */
  readonly noLocalEndpoints?: NoLocalEndpoints;
  /** The mode's own gauges, published with the shared ones after a successful sync. */
  readonly publish?: (metrics: ProxyMetrics) => void;
  /**
   * --dry-run: what follows the `# sync` header, read lazily while it is written (the step keeps its
   * source unchanged until the next sync). Absent outside a dry run.
   */
  readonly dryRunOutput?: Iterable<string>;
  /** Word of the dry-run header after the sync number; default `full` / `partial`. */
  readonly dryRunLabel?: string;
  /** A header line of the backend's own instead of the engine's `# sync N LABEL TIME[ FAMILY]` (newline included). */
  readonly dryRunHeader?: string;
  /** Synced, but something is worth trying again soon (e.g. a proxy socket that failed to open). */
  readonly retryAfterMs?: number;
}

/**
 * `failed`: nothing reliable is in place; the engine retries after syncPeriod with a full sync.
 * `retry`: the step left something out that made the kernel refuse the rest (a quarantined service
 * port): try again at once, as a full sync, within the same sync.
 */
export type SyncResult = SyncedResult | { readonly outcome: 'failed' } | { readonly outcome: 'retry' };

/** A monitor that notices our rules vanished behind our back (a flush, a deleted table) and forces a resync. */
export interface FlushMonitor {
  /** Starts checking (a first check may run before it resolves). */
  start(): void | Promise<void>;
  stop(): void;
}
