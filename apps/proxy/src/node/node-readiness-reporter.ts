import type { Clock, IPFamily, Logger, ProxyHealthChecker, TimerHandle } from '@kube-proxy/core';
import {
  KUBE_PROXY_READY,
  kubeProxyReadyCondition,
  readinessMessage,
  reasonOf,
  type NodeConditionJson,
  type ReadinessState,
} from './kube-proxy-ready-condition.js';
import type { NodeStatusClient } from './node-status-client.js';

/** How often the health state is looked at (a transition to False is seen within this). */
export const DEFAULT_CHECK_INTERVAL_MS = 1000;
/**
 * How often an unchanged condition is re-sent with a new lastHeartbeatTime. Not needed for the
 * transitions; it re-creates the condition if the Node object was replaced or the condition removed,
 * and lets a reader tell a live True from one left by a proxy that died. Five minutes, the kubelet's
 * default node status report frequency, so a node costs the API server one extra write per 5 min.
 */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 5 * 60_000;
/** A failed write is retried after 1 s, doubling up to 30 s. */
export const DEFAULT_RETRY = { initialMs: 1000, maxMs: 30_000 } as const;

export interface NodeReadinessReporterOptions {
  readonly nodeName: string;
  readonly mode: string;
  /** The proxied families, primary first; the first sync waited for covers all of them. */
  readonly families: readonly IPFamily[];
  /** The proxier health /healthz reads (the agent's ProxierHealthTracker). */
  readonly checker: ProxyHealthChecker;
  /** Its bound (2 × syncPeriod), for the message. */
  readonly healthTimeoutMs: number;
  readonly client: NodeStatusClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly checkIntervalMs?: number;
  readonly heartbeatIntervalMs?: number;
  readonly retry?: { readonly initialMs: number; readonly maxMs: number };
}

interface Published {
  readonly ready: boolean;
  readonly message: string;
  readonly transitionAt: number;
  readonly heartbeatAt: number;
}

/**
 * Publishes the KubeProxyReady Node condition: nothing until the first full sync of every family,
 * then True; False (SyncFailing) while the proxier health that /healthz answers from says a family's
 * change has gone unprogrammed for the healthz bound (2 × syncPeriod) or longer; True again once it
 * syncs. /healthz's other inputs (the Node's eligibility, the API source's reachability) are not
 * about this node's rules and are left out. It writes only on a transition, on the heartbeat, and to
 * retry a failed write; a failed write is logged, never fatal. Only /healthz's bound is shared: the
 * reporter reads the same tracker, it keeps no health state of its own.
 */
export class NodeReadinessReporter {
  private firstSyncedAt: number | undefined;
  private published: Published | undefined;
  /** The state last seen and since when: a write that had to be retried keeps the time it began. */
  private observed: { ready: boolean; at: number } | undefined;
  private inFlight: Promise<void> | undefined;
  private retryAt = 0;
  private retryDelayMs = 0;
  private timer: TimerHandle | undefined;
  private stopped = false;
  private started = false;

  constructor(private readonly opts: NodeReadinessReporterOptions) {}

  /** Starts watching the health state; the first write follows `firstSync` (a rejection means the run ended first). */
  start(firstSync: Promise<void>): void {
    if (this.started || this.stopped) return;
    this.started = true;
    firstSync.then(
      () => {
        if (this.stopped) return;
        this.firstSyncedAt = this.opts.clock.now();
        void this.tick();
      },
      () => undefined,
    );
    this.arm();
  }

  /** Stops the checks; waits for a write in flight (bounded by the API client's request timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.opts.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  /** What was last written, if anything (tests, diagnostics). */
  lastPublished(): { ready: boolean; message: string; transitionAt: number; heartbeatAt: number } | undefined {
    return this.published;
  }

  /** Looks at the health state now and writes if due; resolves when that write has finished. */
  tick(): Promise<void> {
    if (this.stopped || this.firstSyncedAt === undefined) return Promise.resolve();
    if (this.inFlight) return this.inFlight;
    const now = this.opts.clock.now();
    const state = this.state();
    if (this.observed?.ready !== state.ready) this.observed = { ready: state.ready, at: now };
    if (!this.due(state, now)) return Promise.resolve();
    const write = this.publish(state, now).finally(() => {
      this.inFlight = undefined;
    });
    this.inFlight = write;
    return write;
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer = this.opts.clock.setTimeout(() => {
      void this.tick();
      this.arm();
    }, this.opts.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS);
  }

  /** Ready unless a family is late programming a change (the health tracker's own judgement). */
  private state(): ReadinessState {
    const health = this.opts.checker.health();
    const failing = (Object.keys(health.status) as IPFamily[]).filter((f) => health.status[f]?.healthy === false).sort();
    const lastSynced: Partial<Record<IPFamily, number>> = {};
    for (const f of failing) {
      const at = health.status[f]?.lastUpdated;
      if (at !== undefined) lastSynced[f] = at;
    }
    return { ready: failing.length === 0 && health.healthy, failing, lastSynced };
  }

  private due(state: ReadinessState, now: number): boolean {
    if (now < this.retryAt) return false;
    const p = this.published;
    if (p === undefined || p.ready !== state.ready) return true;
    return now - p.heartbeatAt >= (this.opts.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS);
  }

  private async publish(state: ReadinessState, now: number): Promise<void> {
    const { client, nodeName, logger, mode, families, healthTimeoutMs } = this.opts;
    const previous = this.published;
    let condition: NodeConditionJson | undefined;
    try {
      const transitionAt = await this.transitionTime(state, now);
      const sameState = previous !== undefined && previous.ready === state.ready;
      const message = sameState ? previous.message : readinessMessage({ mode, families, state, since: transitionAt, healthTimeoutMs });
      condition = kubeProxyReadyCondition({ state, message, transitionAt, heartbeatAt: now });
      await client.patchConditions(nodeName, [condition]);
      this.published = { ready: state.ready, message, transitionAt, heartbeatAt: now };
      this.retryAt = 0;
      this.retryDelayMs = 0;
      const meta = { node: nodeName, status: condition.status, reason: condition.reason, message };
      if (sameState) logger.verbose(`Refreshed the Node condition ${KUBE_PROXY_READY}`, meta);
      else logger.info(`Set the Node condition ${KUBE_PROXY_READY}=${condition.status}`, meta);
    } catch (err) {
      const retry = this.opts.retry ?? DEFAULT_RETRY;
      this.retryDelayMs = this.retryDelayMs === 0 ? retry.initialMs : Math.min(retry.maxMs, this.retryDelayMs * 2);
      this.retryAt = this.opts.clock.now() + this.retryDelayMs;
      logger.warn(`Could not set the Node condition ${KUBE_PROXY_READY}; retrying`, {
        node: nodeName,
        status: state.ready ? 'True' : 'False',
        reason: reasonOf(state),
        retryInMs: this.retryDelayMs,
        err: (err as Error)?.message ?? String(err),
      });
    }
  }

  /**
   * When the published state began: kept across heartbeats; for this process's first write, the
   * Node's own lastTransitionTime when it already says the same (a restarted proxy is not a
   * transition); otherwise when this process first saw the state.
   */
  private async transitionTime(state: ReadinessState, now: number): Promise<number> {
    const began = this.observed?.ready === state.ready ? this.observed.at : now;
    const p = this.published;
    if (p !== undefined) return p.ready === state.ready ? p.transitionAt : began;
    try {
      const existing = await this.opts.client.getCondition(this.opts.nodeName, KUBE_PROXY_READY);
      const t = existing && existing.status === (state.ready ? 'True' : 'False') ? Date.parse(existing.lastTransitionTime) : NaN;
      if (Number.isFinite(t)) return t;
    } catch (err) {
      this.opts.logger.verbose(`Could not read the Node's ${KUBE_PROXY_READY} condition; taking now as its transition time`, {
        err: (err as Error)?.message ?? String(err),
      });
    }
    return began;
  }
}
