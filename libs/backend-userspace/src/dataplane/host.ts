import type { IPFamily, Logger } from '@kube-proxy/core';
import { newProxyCounters, type ProxyCounters, FdBudget, localSocketOpener, type ProxySocketHandle } from '@kube-proxy/userspace-proxy';
import type { DataPlaneConfig, FromDataPlane, ToDataPlane } from './protocol.js';
import { sharedCounters } from './shared-counters.js';

/*
 * The data plane's side: runs the proxy sockets on the thread it lives on. Keep this module's imports
 * to the proxy code: the worker's isolate loads only them (a data plane sharing the isolate of the
 * control plane and its libraries spent 3-4x the CPU per GB; see the README's performance notes).
 */

/** How often the data plane drops expired ClientIP affinity entries. */
export const AFFINITY_SWEEP_MS = 60_000;

export interface MessageSink {
  postMessage(message: FromDataPlane): void;
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Handles ToDataPlane messages; replies and logs go to `sink`. */
export class DataPlaneHost {
  private readonly sockets = new Map<number, ProxySocketHandle>();
  private readonly budget: FdBudget;
  private readonly counters = new Map<IPFamily, ProxyCounters>();
  private readonly logger: Logger;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly sink: MessageSink,
    private readonly config: DataPlaneConfig,
  ) {
    this.budget = new FdBudget(config.fdBudget);
    this.logger = messageLogger(sink, {});
    // Updates only arrive when endpoints change, so expired affinity entries are swept here.
    this.sweeper = setInterval(() => this.sweep(), AFFINITY_SWEEP_MS).unref();
  }

  /** Drops expired ClientIP affinity entries of every socket (same endpoints, same timeout). */
  sweep(): void {
    for (const socket of this.sockets.values()) socket.update(socket.endpoints, socket.affinitySeconds);
  }

  handle(message: ToDataPlane): void {
    switch (message.op) {
      case 'open':
        void this.open(message);
        return;
      case 'update':
        this.sockets.get(message.id)?.update(message.endpoints, message.affinitySeconds);
        return;
      case 'close': {
        const socket = this.sockets.get(message.id);
        this.sockets.delete(message.id);
        socket?.close();
        return;
      }
    }
  }

  /** Closes every socket (the worker is being shut down). */
  closeAll(): void {
    clearInterval(this.sweeper);
    for (const socket of this.sockets.values()) socket.close();
    this.sockets.clear();
  }

  private countersOf(family: IPFamily): ProxyCounters {
    let counters = this.counters.get(family);
    if (counters === undefined) {
      const shared = this.config.counters[family];
      counters = shared ? sharedCounters(shared) : newProxyCounters();
      this.counters.set(family, counters);
    }
    return counters;
  }

  private async open(message: Extract<ToDataPlane, { op: 'open' }>): Promise<void> {
    const open = localSocketOpener({
      family: message.family,
      listenIP: message.host,
      udpIdleTimeoutMs: this.config.udpIdleTimeoutMs,
      counters: this.countersOf(message.family),
      budget: this.budget,
      clock: { now: Date.now, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) },
      logger: this.logger.child({ ipFamily: message.family }),
    });
    try {
      const socket = await open(message);
      this.sockets.set(message.id, socket);
      this.sink.postMessage({ op: 'opened', id: message.id, port: socket.port });
    } catch (err) {
      this.sink.postMessage({ op: 'openFailed', id: message.id, code: errorCode(err), message: String(err) });
    }
  }
}

/** A Logger whose entries travel to the main thread's logger. */
function messageLogger(sink: MessageSink, base: Record<string, unknown>): Logger {
  const at =
    (level: Extract<FromDataPlane, { op: 'log' }>['level']) =>
    (message: string, meta: Record<string, unknown> = {}): void =>
      sink.postMessage({ op: 'log', level, message, meta: { ...base, ...meta } });
  return {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    verbose: at('verbose'),
    debug: at('debug'),
    child: (meta: Record<string, unknown>) => messageLogger(sink, { ...base, ...meta }),
  } as Logger;
}
