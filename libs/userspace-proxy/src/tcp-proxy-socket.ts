import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '@kube-proxy/core';
import type { ProxyCounters } from './counters.js';
import { dialWithFailover, type EndpointSocket } from './dial.js';
import type { EndpointPicker } from './endpoint-picker.js';
import type { FdBudget } from './fd-budget.js';
import { listenOn } from './listen.js';

/**
 * One TCP service port's proxy socket: accepts clients, connects each to an endpoint chosen by the
 * picker, then copies bytes both ways. Streams are piped, so a slow reader pauses the other side
 * (backpressure) and an end of stream in one direction is passed on as a half-close while the
 * other direction keeps flowing. Connections are independent of the endpoint list once
 * established: removing an endpoint never cuts them; closing the socket only stops new ones.
 */
export class TcpProxySocket {
  readonly protocol = 'TCP';
  private readonly server: Server;
  private boundPort = 0;
  private closed = false;

  constructor(
    private readonly picker: EndpointPicker,
    private readonly counters: ProxyCounters,
    private readonly budget: FdBudget,
    private readonly logger: Logger,
  ) {
    // pauseOnConnect: nothing is read from the client before its endpoint is connected.
    this.server = createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true }, (client) => {
      void this.accept(client);
    });
    this.server.on('error', (err) => this.logger.error('Proxy socket error', { error: String(err) }));
  }

  get port(): number {
    return this.boundPort;
  }

  /** Binds host:port (0: the kernel picks). Rejects with the bind error (e.g. EADDRINUSE). */
  async listen(host: string, port: number): Promise<number> {
    this.boundPort = await listenOn(this.server, host, port);
    return this.boundPort;
  }

  /** Stops accepting; established connections carry on until they end. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.server.close();
  }

  private async accept(client: Socket): Promise<void> {
    this.counters.tcpAccepted++;
    // Two descriptors for the life of the connection: the client's and the endpoint's.
    if (!this.budget.tryAcquire(2)) {
      this.counters.tcpRejected++;
      if (this.counters.tcpRejected % 1000 === 1) {
        this.logger.warn('Out of file descriptors for proxied connections, resetting new ones', { inUse: this.budget.inUse, limit: this.budget.limit });
      }
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    let clientGone = false;
    const onEarlyClose = (): void => {
      clientGone = true;
    };
    client.on('error', onEarlyClose);
    client.once('close', onEarlyClose);
    const clientIP = client.remoteAddress ?? '';
    const outcome = await dialWithFailover(
      this.picker,
      clientIP,
      this.logger,
      () => this.counters.endpointDialFailures++,
      () => clientGone,
    );
    client.removeListener('close', onEarlyClose);
    if (outcome === undefined) {
      this.budget.release(2);
      if (!clientGone) {
        this.counters.tcpRejected++;
        this.logger.verbose('No endpoint reachable for client, closing it', { client: clientIP, endpoints: this.picker.size });
        // A reset tells the client at once, as a REJECT would, instead of an accepted-then-empty stream.
        client.resetAndDestroy();
      }
      return;
    }
    splice(client, outcome.socket, this.counters, this.budget);
  }
}

/** Connects two sockets both ways; either side failing takes the other down. */
function splice(client: Socket, backend: EndpointSocket, counters: ProxyCounters, budget: FdBudget): void {
  counters.tcpActive++;
  let open = 2;
  const closed = (): void => {
    if (--open > 0) return;
    counters.tcpActive--;
    budget.release(2);
  };
  client.removeAllListeners('error');
  client.on('error', () => backend.destroy());
  backend.on('error', () => client.destroy());
  // A side that closes without a clean end (reset, error) must not leave its peer half open forever.
  client.once('close', (hadError) => {
    closed();
    if (hadError || !client.readableEnded) backend.destroy();
  });
  backend.once('close', (hadError) => {
    closed();
    if (hadError || !backend.readableEnded) client.destroy();
  });
  client.pipe(backend);
  // Endpoint → client: large onread chunks written as they come; a full client pauses the endpoint
  // until it drains (the same backpressure pipe() gives the other direction).
  client.on('drain', () => backend.resume());
  backend.on('end', () => client.end());
  backend.attach(
    (chunk) => client.write(chunk),
    () => client.writableLength === 0,
  );
  client.resume();
}
