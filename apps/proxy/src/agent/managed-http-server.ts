import type { RequestListener, Server } from 'node:http';
import type { Clock, Logger, TimerHandle } from '@kube-proxy/core';
import type { BindAddress } from './bind-address.js';
import { boundPort, closeHttp, listenHttp } from './http-listen.js';

/** Upstream retries a failed healthz/metrics server every 5 s (wait.Until). */
export const SERVER_RETRY_MS = 5000;

/** A healthz or metrics server could not bind and bindAddressHardFail is set. */
export class ServerBindError extends Error {
  constructor(
    readonly server: string,
    readonly address: string,
    cause: unknown,
  ) {
    super(`${server} server failed to listen on ${address}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

export interface ManagedHttpServerOptions {
  /** "healthz" or "metrics", for logs. */
  readonly name: string;
  readonly address: BindAddress;
  readonly handler: RequestListener;
  readonly logger: Logger;
  readonly clock: Clock;
  /** bindAddressHardFail: a failed bind is fatal instead of retried. */
  readonly hardFail: boolean;
  readonly retryMs?: number;
}

/**
 * One of the proxy's own HTTP servers. A failed bind (port in use, no permission) is logged and
 * retried every 5 s, as upstream, unless bindAddressHardFail makes it fatal: start() then rejects
 * with ServerBindError, which the CLI turns into a non-zero exit.
 */
export class ManagedHttpServer {
  private server: Server | undefined;
  private retry: TimerHandle | undefined;
  private stopped = false;

  constructor(private readonly opts: ManagedHttpServerOptions) {}

  async start(): Promise<void> {
    await this.attempt();
  }

  /** The bound port (useful with port 0), or undefined while not listening. */
  port(): number | undefined {
    return this.server ? boundPort(this.server) : undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry !== undefined) this.opts.clock.clearTimeout(this.retry);
    this.retry = undefined;
    const server = this.server;
    this.server = undefined;
    if (server) await closeHttp(server);
  }

  private async attempt(): Promise<void> {
    this.retry = undefined;
    if (this.stopped) return;
    const { name, address, logger } = this.opts;
    try {
      const server = await listenHttp(this.opts.handler, address.host, address.port);
      if (this.stopped) {
        await closeHttp(server);
        return;
      }
      this.server = server;
      server.on('error', (err) => logger.error(`${name} server error`, { address: address.text, err: String(err) }));
      logger.verbose(`Starting ${name} HTTP server`, { address: address.text, port: boundPort(server) });
    } catch (err) {
      logger.error(`${name} server failed`, { address: address.text, err: String(err) });
      if (this.opts.hardFail) throw new ServerBindError(name, address.text, err);
      this.retry = this.opts.clock.setTimeout(() => void this.attempt(), this.opts.retryMs ?? SERVER_RETRY_MS);
    }
  }
}
