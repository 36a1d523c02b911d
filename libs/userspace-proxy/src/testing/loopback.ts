/*
 * Real sockets on 127.0.0.1 for the userspace proxy's tests: small endpoint servers and clients.
 * Every wait is bounded.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import type { ProxyTarget } from '../endpoint-picker.js';

export interface TestServer {
  readonly target: ProxyTarget;
  close(): Promise<void>;
}

function targetOf(port: number): ProxyTarget {
  return { ip: '127.0.0.1', port, key: `127.0.0.1:${port}` };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
}

function closer(server: Server, sockets: Set<Socket>): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

/**
 * An endpoint that answers with its name and a newline, then echoes; after the client's end it
 * reports the number of bytes it received (`bytes=N\n`) and ends: so one server shows which endpoint
 * answered, that data went through intact, and that a half-close was passed on.
 */
export async function nameServer(name: string, options: { readonly pauseMs?: number } = {}): Promise<TestServer & { readonly connections: number }> {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.write(`${name}\n`);
    let received = 0;
    if (options.pauseMs) {
      socket.pause();
      setTimeout(() => socket.resume(), options.pauseMs);
    }
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    socket.on('end', () => socket.end(`bytes=${received}\n`));
  });
  const port = await listen(server);
  return {
    target: targetOf(port),
    close: closer(server, sockets),
    get connections() {
      return state.connections;
    },
  };
}

/** A port nobody listens on (bound, then closed): connecting to it is refused. */
export async function refusedTarget(): Promise<ProxyTarget> {
  const server = createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return targetOf(port);
}

export interface Exchange {
  /** The first line the endpoint sent (its name). */
  readonly name: string;
  /** Everything received after it. */
  readonly rest: string;
}

/**
 * Connects to 127.0.0.1:port, sends `payload`, half-closes, and collects the reply until the peer
 * ends. Rejects on error or after `timeoutMs`.
 */
export function exchange(port: number, payload: string | Buffer = '', timeoutMs = 5000): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`exchange with port ${port} timed out`));
    }, timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      socket.end();
      const text = Buffer.concat(chunks).toString();
      const nl = text.indexOf('\n');
      resolve({ name: nl < 0 ? text : text.slice(0, nl), rest: nl < 0 ? '' : text.slice(nl + 1) });
    });
    socket.on('connect', () => socket.end(payload));
  });
}

/** A UDP endpoint that answers each datagram with `name:payload`. */
export async function udpNameServer(name: string): Promise<TestServer> {
  const socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => socket.send(`${name}:${msg.toString()}`, rinfo.port, rinfo.address));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return {
    target: targetOf(socket.address().port),
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/** A UDP client connected to 127.0.0.1:port: replies from any other address are dropped by the kernel. */
export async function udpClient(port: number): Promise<{ socket: UdpSocket; ask(text: string, timeoutMs?: number): Promise<string>; close(): void }> {
  const socket = createSocket('udp4');
  // An ICMP port-unreachable surfaces as an 'error' (ECONNREFUSED) on a connected socket.
  let failPending: ((err: Error) => void) | undefined;
  socket.on('error', (err) => failPending?.(err));
  await new Promise<void>((resolve) => socket.connect(port, '127.0.0.1', () => resolve()));
  return {
    socket,
    ask: (text, timeoutMs = 2000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          socket.removeListener('message', onMessage);
          reject(new Error(`no UDP reply to ${text} within ${timeoutMs} ms`));
        }, timeoutMs);
        const onMessage = (msg: Buffer): void => {
          clearTimeout(timer);
          resolve(msg.toString());
        };
        failPending = (err) => {
          clearTimeout(timer);
          socket.removeListener('message', onMessage);
          reject(err);
        };
        socket.once('message', onMessage);
        socket.send(text);
      }),
    close: () => socket.close(),
  };
}

/** Polls `check` every 20 ms until it is true; false after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 3000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

/**
 * An endpoint that streams `bytes` bytes to each client in 64 KiB writes, honouring backpressure,
 * then ends. `sent()` counts bytes whose write completed (handed to the kernel).
 */
export async function sourceServer(bytes: number): Promise<TestServer & { sent(): number }> {
  const sockets = new Set<Socket>();
  let sent = 0;
  const chunk = Buffer.alloc(64 * 1024, 5);
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let left = bytes;
    const pump = (): void => {
      while (left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= piece.length;
        const more = socket.write(piece, () => (sent += piece.length));
        if (!more) {
          socket.once('drain', pump);
          return;
        }
      }
      socket.end();
    };
    pump();
  });
  const port = await listen(server);
  return { target: targetOf(port), close: closer(server, sockets), sent: () => sent };
}
