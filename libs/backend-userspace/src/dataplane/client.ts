import { Worker } from 'node:worker_threads';
import type { IPFamily, Logger } from '@kube-proxy/core';
import type { OpenProxySocket, OpenRequest, ProxySocketHandle, ProxyTarget } from '@kube-proxy/userspace-proxy';
import type { DataPlaneConfig, FromDataPlane, ToDataPlane } from './protocol.js';

/** The channel to the data plane: a Worker in production, a MessageChannel port in tests. */
export interface DataPlaneChannel {
  postMessage(message: ToDataPlane): void;
  on(event: 'message', listener: (message: FromDataPlane) => void): void;
  /** The data plane went away (a crash); every socket it held is gone. */
  onLost(listener: (reason: string) => void): void;
  terminate(): void;
}

/** Starts the worker thread (dist/dataplane/worker.js next to this module). */
export function workerChannel(config: DataPlaneConfig): DataPlaneChannel {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: config, stdout: false, stderr: false });
  // The main thread's own work (API watches, timers) decides how long the process lives.
  worker.unref();
  let lost: ((reason: string) => void) | undefined;
  let terminating = false;
  worker.on('error', (err) => lost?.(`data-plane worker failed: ${String(err)}`));
  worker.on('exit', (code) => {
    if (!terminating) lost?.(`data-plane worker exited with code ${code}`);
  });
  return {
    postMessage: (m) => worker.postMessage(m),
    on: (_event, listener) => worker.on('message', listener),
    onLost: (listener) => {
      lost = listener;
    },
    terminate: () => {
      terminating = true;
      void worker.terminate();
    },
  };
}

interface Pending {
  resolve(port: number): void;
  reject(err: Error): void;
}

/**
 * The proxier's side of the data plane: opens, updates and closes proxy sockets that live in a
 * worker thread, so bytes are copied on a thread (and isolate) of their own while the main thread
 * syncs. One client serves both families of a process. If the worker dies, every handle it gave out
 * is dead: `onLost` tells the proxiers to forget their sockets and resync, and the next open starts
 * a new worker.
 */
export class DataPlaneClient {
  private channel: DataPlaneChannel | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly lostListeners: ((reason: string) => void)[] = [];

  constructor(
    private readonly start: () => DataPlaneChannel,
    private readonly logger: Logger,
  ) {}

  /** Called when the data plane is lost (after the failure was logged). */
  onLost(listener: (reason: string) => void): void {
    this.lostListeners.push(listener);
  }

  /** An opener for one family's proxy sockets, listening on `host`. */
  opener(family: IPFamily, host: string): OpenProxySocket {
    return (request: OpenRequest) => this.open(family, host, request);
  }

  /** Ends the worker and everything it serves. */
  shutdown(): void {
    const channel = this.channel;
    this.channel = undefined;
    channel?.terminate();
    this.failPending('the data plane was shut down');
  }

  private ensureChannel(): DataPlaneChannel {
    if (this.channel) return this.channel;
    const channel = this.start();
    channel.on('message', (m) => this.receive(m));
    channel.onLost((reason) => {
      if (this.channel !== channel) return;
      this.channel = undefined;
      this.logger.error('The userspace data plane was lost; reopening its sockets on the next sync', { reason });
      this.failPending(reason);
      for (const listener of this.lostListeners) listener(reason);
    });
    this.channel = channel;
    return channel;
  }

  private open(family: IPFamily, host: string, request: OpenRequest): Promise<ProxySocketHandle> {
    const channel = this.ensureChannel();
    const id = this.nextId++;
    return new Promise<number>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      channel.postMessage({ op: 'open', id, family, protocol: request.protocol, host, port: request.port, endpoints: request.endpoints, affinitySeconds: request.affinitySeconds });
    }).then((port) => this.handle(channel, id, port, request.endpoints, request.affinitySeconds));
  }

  private handle(channel: DataPlaneChannel, id: number, port: number, initial: readonly ProxyTarget[], initialAffinity: number): ProxySocketHandle {
    let endpoints = initial;
    let affinity = initialAffinity;
    let closed = false;
    return {
      port,
      get endpoints() {
        return endpoints;
      },
      get affinitySeconds() {
        return affinity;
      },
      update: (updated: readonly ProxyTarget[], affinitySeconds: number): void => {
        // Every sync updates every socket; only changes cross the thread boundary (10,000 services
        // must not mean 10,000 messages per sync).
        if (affinitySeconds === affinity && sameTargets(endpoints, updated)) return;
        endpoints = updated;
        affinity = affinitySeconds;
        if (this.channel === channel) channel.postMessage({ op: 'update', id, endpoints: updated, affinitySeconds });
      },
      close: (): void => {
        if (closed) return;
        closed = true;
        if (this.channel === channel) channel.postMessage({ op: 'close', id });
      },
    };
  }

  private receive(message: FromDataPlane): void {
    switch (message.op) {
      case 'opened':
        this.pending.get(message.id)?.resolve(message.port);
        this.pending.delete(message.id);
        return;
      case 'openFailed': {
        const err = Object.assign(new Error(message.message), { code: message.code });
        this.pending.get(message.id)?.reject(err);
        this.pending.delete(message.id);
        return;
      }
      case 'log':
        this.logger[message.level](message.message, message.meta);
        return;
    }
  }

  private failPending(reason: string): void {
    for (const p of this.pending.values()) p.reject(new Error(reason));
    this.pending.clear();
  }
}

function sameTargets(a: readonly ProxyTarget[], b: readonly ProxyTarget[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if ((a[i] as ProxyTarget).key !== (b[i] as ProxyTarget).key) return false;
  return true;
}
