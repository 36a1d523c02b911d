import type { Server, ServerResponse } from 'node:http';
import type { IPFamily, Logger, ProxyHealthChecker, ServiceHealthServer } from '@kube-proxy/core';
import { boundPort, closeHttp, listenHttp } from './http-listen.js';
import { sendServiceHealth } from './service-health-response.js';

interface Listener {
  /** The healthCheckNodePort asked for (the bound port differs only for port 0, in tests). */
  readonly port: number;
  readonly server: Server;
}

/** Reports without a family (a single-stack backend) are kept under this key. */
const NO_FAMILY = '-';

/**
 * The health-check node port listeners (upstream's ServiceHealthServer): one HTTP listener per
 * Service with a healthCheckNodePort, opened and closed as the proxier reports Services. A port that
 * cannot be bound is logged and tried again on the next sync, never fatal. Dual-stack proxiers
 * report separately: a Service is served while any family reports it, and its local endpoint count
 * is the largest any family reports (a dual-stack pod is one endpoint per family, not two).
 */
export class ServiceHealthListeners implements ServiceHealthServer {
  private readonly services = new Map<string, ReadonlyMap<string, number>>();
  private readonly endpoints = new Map<string, ReadonlyMap<string, number>>();
  private readonly listeners = new Map<string, Listener>();
  /** Reconciliations run one at a time, so two families' syncs never open the same port twice. */
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly opts: {
      readonly checker: ProxyHealthChecker;
      readonly logger: Logger;
      readonly nodeName: string;
      /** Address to listen on; undefined = every address (upstream's default without nodePortAddresses). */
      readonly host?: string;
    },
  ) {}

  syncServices(services: ReadonlyMap<string, number>, family?: IPFamily): Promise<void> {
    this.services.set(family ?? NO_FAMILY, new Map(services));
    return this.enqueue(() => this.reconcile());
  }

  async syncEndpoints(endpoints: ReadonlyMap<string, number>, family?: IPFamily): Promise<void> {
    this.endpoints.set(family ?? NO_FAMILY, new Map(endpoints));
  }

  /** Namespaced name → bound port, of the Services being served. */
  listening(): Map<string, number> {
    return new Map([...this.listeners].map(([name, l]) => [name, boundPort(l.server)]));
  }

  /** Closes every listener; later syncs are ignored. */
  close(): Promise<void> {
    this.closed = true;
    return this.enqueue(async () => {
      const all = [...this.listeners.values()];
      this.listeners.clear();
      await Promise.all(all.map((l) => closeHttp(l.server)));
    });
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.queue.then(step).catch((err: unknown) => {
      this.opts.logger.error('Error syncing healthcheck services', { err: String(err) });
    });
    this.queue = next;
    return next;
  }

  /** The wanted Services over all families: namespaced name → port. */
  private wanted(): Map<string, number> {
    const out = new Map<string, number>();
    for (const services of this.services.values()) for (const [name, port] of services) if (!out.has(name)) out.set(name, port);
    return out;
  }

  private localEndpoints(name: string): number {
    let max = 0;
    for (const counts of this.endpoints.values()) max = Math.max(max, counts.get(name) ?? 0);
    return max;
  }

  private async reconcile(): Promise<void> {
    if (this.closed) return;
    const { logger } = this.opts;
    const wanted = this.wanted();
    for (const [name, l] of [...this.listeners]) {
      if (wanted.get(name) === l.port) continue;
      logger.verbose('Closing healthcheck', { service: name, port: l.port });
      this.listeners.delete(name);
      await closeHttp(l.server);
    }
    for (const [name, port] of wanted) {
      if (this.listeners.has(name)) continue;
      logger.verbose('Opening healthcheck', { service: name, port });
      try {
        const server = await listenHttp((_req, res) => this.answer(name, res), this.opts.host, port);
        this.listeners.set(name, { port, server });
      } catch (err) {
        // Not recorded, so the next sync tries again (the port may be freed by then).
        logger.error('Failed to start healthcheck', { node: this.opts.nodeName, service: name, port, err: String(err) });
      }
    }
  }

  private answer(name: string, res: ServerResponse): void {
    if (!this.listeners.has(name)) {
      // A request racing the listener's close; upstream logs it and writes nothing (an empty 200).
      this.opts.logger.error('Received request for closed healthcheck', { service: name });
      res.end();
      return;
    }
    const slash = name.indexOf('/');
    const service = { namespace: name.slice(0, slash), name: name.slice(slash + 1) };
    sendServiceHealth(res, service, this.localEndpoints(name), this.opts.checker.isHealthy());
  }
}
