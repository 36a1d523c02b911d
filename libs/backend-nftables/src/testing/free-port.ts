import { createServer } from 'node:net';

/** A TCP port free right now on 127.0.0.1 (bound and released), for listeners that specs bind for real. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
