/** Upstream's proxyutil.FullSyncPeriod: a full resync at least this often. */
export const FULL_SYNC_PERIOD_MS = 60 * 60 * 1000;

/** The sync about to run: whether it is a full one, and the request count it started with. */
export interface SyncTicket {
  readonly full: boolean;
  readonly requestsAtStart: number;
}

/**
 * When a sync must be a full one (upstream's needFullSync): at start, after any failure (the change
 * trackers were drained, so only a full sync can recover), when asked (a flush noticed, the local
 * detector changed, a topology label changed) and at least every `fullSyncPeriodMs`. A request
 * arriving while a sync runs is not cleared by that sync's success. Synchronous and clock-free, so
 * the engine and upstream's replayed tests (the iptables fake proxier) decide the same way.
 */
export class SyncPolicy {
  private needFullSync = true;
  private requests = 0;
  private lastFullSync = Number.NEGATIVE_INFINITY;

  constructor(
    /** Every sync is a full one (a mode that reads the kernel back or reconciles everything each time). */
    private readonly alwaysFull = false,
    private readonly fullSyncPeriodMs = FULL_SYNC_PERIOD_MS,
  ) {}

  /** Asks for the next sync to be a full one. */
  requestFullSync(): void {
    this.needFullSync = true;
    this.requests++;
  }

  /** Whether a full sync is owed (asked for, or after a failure). */
  get fullSyncPending(): boolean {
    return this.needFullSync;
  }

  /** Starts a sync at `now`; `topologyChanged` (node labels moved) forces a full one, as upstream. */
  begin(now: number, topologyChanged = false): SyncTicket {
    if (topologyChanged) this.needFullSync = true;
    const full = this.alwaysFull || this.needFullSync || now - this.lastFullSync > this.fullSyncPeriodMs;
    return { full, requestsAtStart: this.requests };
  }

  /** Whether someone asked for a full sync since `ticket`'s sync began. */
  requestedSince(ticket: SyncTicket): boolean {
    return this.requests !== ticket.requestsAtStart;
  }

  succeeded(ticket: SyncTicket, start: number): void {
    if (ticket.full) this.lastFullSync = start;
    this.needFullSync = this.requestedSince(ticket);
  }

  failed(): void {
    this.needFullSync = true;
  }
}
