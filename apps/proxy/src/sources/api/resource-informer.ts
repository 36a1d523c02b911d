import { ListWatch, type KubernetesListObject, type KubernetesObject, type Watch } from '@kubernetes/client-node';
import type { Logger } from '@kube-proxy/core';
import { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
import { InformerWatch } from './informer-watch.js';
import type { KubeClient } from './kube-client.js';
import { withTypeMeta } from './trim-object.js';

/** What an informer reports, in order. `update` carries only the new object (client-node's model). */
export interface InformerEvents<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  /** After every successful (re)list has been applied; `objects` is the whole cache afterwards. */
  listed(objects: readonly T[]): void;
}

export type InformerState = 'idle' | 'connecting' | 'listing' | 'watching' | 'backoff' | 'stopped';

/**
 * What to do about a failed list or watch: retry with a warning (the default), retry without one
 * (the caller has already said what it means), or give up and stop (the resource is not served).
 */
export type FailurePolicy = (err: unknown) => 'retry' | 'retry-quietly' | 'give-up';

export interface InformerHealth {
  readonly resource: string;
  readonly state: InformerState;
  /** The initial list has been delivered. */
  readonly synced: boolean;
  /** Epoch ms of the last successful exchange (list, watch established, any watch line). */
  readonly lastContact?: number;
  /** Epoch ms of the first failure since the watch was last up. */
  readonly failingSince?: number;
  readonly lastError?: string;
  readonly consecutiveFailures: number;
}

export interface ResourceInformerOptions {
  /** For logs and health, e.g. "services". */
  readonly resource: string;
  /** Collection path for list and watch, e.g. "/api/v1/services". */
  readonly path: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly client: Pick<KubeClient, 'kubeConfig' | 'api' | 'limiter'>;
  readonly logger: Logger;
  readonly backoff?: BackoffOptions;
  /** Server-side watch timeout per watch request; default 300–600 s at random, as client-go. */
  readonly watchTimeoutSeconds?: () => number;
  /** A watch silent this long past its server-side timeout is aborted and restarted. Default 60 s. */
  readonly watchStallGraceMs?: number;
  /** For optional resources; without it every failure is retried with a warning. */
  readonly onFailure?: FailurePolicy;
  readonly now?: () => number;
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { statusCode?: number }).statusCode;
    return code ? `${err.message} (HTTP ${code})` : err.message;
  }
  return String(err);
}

/**
 * One list+watch of a collection on client-node's ListWatch, made to behave like client-go's
 * reflector: it restarts after any failure with capped exponential backoff (1.4 gives up after
 * anything but a 410), re-watches from the last resourceVersion when it can and relists when the
 * server says 410 Gone, signals when each list has been applied, and reports its health.
 */
export class ResourceInformer<T extends KubernetesObject> {
  private readonly lw: ListWatch<T>;
  private readonly backoff: Backoff;
  private readonly now: () => number;
  private state: InformerState = 'idle';
  private stopped = false;
  private synced = false;
  private listApplied = false;
  private readonly syncWaiters: Array<() => void> = [];
  private restartTimer: NodeJS.Timeout | undefined;
  private listAbort: AbortController | undefined;
  private readonly stopAbort = new AbortController();
  private lastContact: number | undefined;
  private failingSince: number | undefined;
  private lastError: string | undefined;

  constructor(
    private readonly opts: ResourceInformerOptions,
    private readonly events: InformerEvents<T>,
  ) {
    this.now = opts.now ?? Date.now;
    this.backoff = new Backoff(opts.backoff ?? DEFAULT_BACKOFF, this.now);
    const watch = new InformerWatch(opts.client.kubeConfig, {
      beforeWatch: () => this.afterList(),
      admit: () => opts.client.limiter.acquire(this.stopAbort.signal),
      isStopped: () => this.stopped,
      established: () => this.watchEstablished(),
      activity: () => this.touch(),
      timeoutSeconds: opts.watchTimeoutSeconds ?? (() => Math.floor(300 * (1 + Math.random()))),
      stallGraceMs: () => opts.watchStallGraceMs ?? 60_000,
    });
    this.lw = new ListWatch<T>(opts.path, watch as Watch, () => this.fetchList(), false, opts.labelSelector, opts.fieldSelector);
    this.lw.on('add', (o) => this.events.add(o));
    this.lw.on('update', (o) => this.events.update(o));
    this.lw.on('delete', (o) => this.events.delete(o));
    this.lw.on('error', (err) => this.failed(err));
    this.lw.on('connect', () => {
      if (!this.stopped) this.state = 'connecting';
    });
  }

  start(): void {
    if (this.stopped || this.state !== 'idle') return;
    this.run();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.state = 'stopped';
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.stopAbort.abort();
    this.listAbort?.abort();
    // 1.4 reports the aborted request as an error callback; failed() ignores it once stopped.
    void this.lw.stop();
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the initial list has been delivered (never, if the informer never gets there). */
  whenSynced(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** The informer's cache. */
  list(): readonly T[] {
    return this.lw.list();
  }

  get(name: string, namespace?: string): T | undefined {
    return this.lw.get(name, namespace);
  }

  health(): InformerHealth {
    return {
      resource: this.opts.resource,
      state: this.state,
      synced: this.synced,
      consecutiveFailures: this.failingSince === undefined ? 0 : this.backoff.failures(),
      ...(this.lastContact !== undefined ? { lastContact: this.lastContact } : {}),
      ...(this.failingSince !== undefined ? { failingSince: this.failingSince } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  private run(): void {
    if (this.stopped) return;
    // start() resolves once the watch is up; it rejects only if applying a list threw.
    this.lw.start().catch((err: unknown) => this.failed(err));
  }

  private async fetchList(): Promise<KubernetesListObject<T>> {
    const ac = new AbortController();
    this.listAbort = ac;
    this.state = 'listing';
    try {
      const { labelSelector, fieldSelector } = this.opts;
      const list = await this.opts.client.api.request<KubernetesListObject<T>>('GET', this.opts.path, {
        query: { labelSelector, fieldSelector },
        signal: ac.signal,
      });
      // ListWatch would still apply a list that arrives after stop(); handlers must hear nothing more.
      if (this.stopped) throw new Error('informer stopped');
      this.touch();
      this.listApplied = true;
      return { ...list, items: withTypeMeta(list) };
    } finally {
      if (this.listAbort === ac) this.listAbort = undefined;
    }
  }

  private afterList(): void {
    if (!this.listApplied || this.stopped) return;
    this.listApplied = false;
    this.events.listed(this.lw.list());
    if (!this.synced) {
      this.synced = true;
      this.opts.logger.verbose('Informer synced', { resource: this.opts.resource, objects: this.lw.list().length });
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private watchEstablished(): void {
    if (this.stopped) return;
    if (this.failingSince !== undefined) {
      this.opts.logger.info('Informer reconnected', { resource: this.opts.resource, downForMs: this.now() - this.failingSince });
    }
    this.state = 'watching';
    this.failingSince = undefined;
    this.touch();
  }

  private touch(): void {
    this.lastContact = this.now();
  }

  private failed(err: unknown): void {
    if (this.stopped) return;
    this.lastError = describe(err);
    const policy = this.opts.onFailure?.(err) ?? 'retry';
    if (policy === 'give-up') {
      this.stop();
      return;
    }
    this.failingSince ??= this.now();
    this.state = 'backoff';
    // One restart at a time: a failure reported while a restart is pending belongs to the same incident.
    if (this.restartTimer) return;
    const delayMs = this.backoff.next();
    if (policy === 'retry') {
      this.opts.logger.warn('Informer list/watch failed; retrying', {
        resource: this.opts.resource,
        err: this.lastError,
        retryInMs: delayMs,
        failures: this.backoff.failures(),
      });
    }
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.run();
    }, delayMs);
    this.restartTimer.unref();
  }
}
