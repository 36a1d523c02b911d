import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { trimObject } from './trim-object.js';

/** What the informer needs to know about, and decide for, each watch ListWatch opens. */
export interface WatchHooks {
  /**
   * Called synchronously when ListWatch asks for a watch. ListWatch applies a fresh list
   * synchronously right before that, so at this point every add/update/delete of the list has been
   * delivered: the one reliable "list done" signal client-node 1.4 offers.
   */
  beforeWatch(): void;
  /** Waits for the client rate limiter; rejects when the informer stops meanwhile. */
  admit(): Promise<void>;
  isStopped(): boolean;
  /** The server answered the watch with 200 and headers. */
  established(): void;
  /** Any line received (event or bookmark): proof the connection is alive. */
  activity(): void;
  /** Server-side watch timeout to request (upstream: 5–10 min, randomised). */
  timeoutSeconds(): number;
  /** How long past that timeout a silent watch is considered dead. */
  stallGraceMs(): number;
}

/**
 * client-node's Watch with what its 1.4 ListWatch lacks: bookmarks and a server-side timeout are
 * requested (like client-go's reflector), a watch that stays silent past that timeout is aborted (a
 * half-open TCP connection would otherwise hang the informer forever), no connection is opened or
 * kept once the informer is stopped (ListWatch would start one after a list that completes after
 * stop(), and cannot abort one whose headers are still pending), and the informer learns when a
 * list is applied and when the watch is up.
 */
export class InformerWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly hooks: WatchHooks,
  ) {
    super(config);
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    this.hooks.beforeWatch();
    try {
      await this.hooks.admit();
    } catch (err) {
      done(err);
      return new AbortController();
    }
    // A never-connected controller: ListWatch only keeps it to abort it later.
    if (this.hooks.isStopped()) return new AbortController();

    const timeoutSeconds = this.hooks.timeoutSeconds();
    const stallMs = timeoutSeconds * 1000 + this.hooks.stallGraceMs();
    let ended = false;
    let stalled = false;
    let watchdog: NodeJS.Timeout | undefined;
    const arm = () => {
      if (watchdog) clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        stalled = true;
        // Fires long after the assignment below (at least the server-side timeout), never before it.
        controller.abort();
      }, stallMs);
      watchdog.unref();
    };

    const controller = await super.watch(
      path,
      { ...queryParams, allowWatchBookmarks: true, timeoutSeconds },
      (phase, obj, raw) => {
        arm();
        this.hooks.activity();
        // Cached objects keep only what the proxy reads (trim-object.ts); ERROR/BOOKMARK pass as they are.
        if ((phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED') && typeof obj === 'object' && obj !== null) {
          trimObject(obj as KubernetesObject, (obj as KubernetesObject).kind ?? '');
        }
        callback(phase, obj, raw);
      },
      (err) => {
        ended = true;
        if (watchdog) clearTimeout(watchdog);
        done(stalled ? new Error(`watch received nothing for ${stallMs} ms; reconnecting`) : err);
      },
    );
    if (ended) return controller;
    if (this.hooks.isStopped()) {
      // stop() came while we waited for the headers: ListWatch aborted its previous request, not this one.
      controller.abort();
      return controller;
    }
    this.hooks.established();
    arm();
    return controller;
  }
}
