import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts an HTTP server on host:port; rejects with the listen error (EADDRINUSE, EACCES, …). */
export function listenHttp(handler: RequestListener, host: string | undefined, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(handler);
    const onError = (err: Error) => {
      server.close();
      reject(err);
    };
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.off('error', onError);
      resolve(server);
    });
  });
}

/** Stops accepting and drops open (keep-alive) connections, so a stop never waits on clients. */
export function closeHttp(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export function boundPort(server: Server): number {
  return (server.address() as AddressInfo).port;
}
