#!/usr/bin/env node
// Backend ("endpoint") server of the userspace-proxy benchmark. Plain Node (no build), run inside the
// bench's network namespace:
//
//   node userspace-echo-server.mjs --port 7001 [--host 127.0.0.1] [--max-lifetime-s 600]
//
// The first byte a client sends picks what the connection does:
//   'E'  echo: every later byte is written back (backpressure respected)
//   'S'  source: the server streams 256 KiB chunks as fast as the peer reads, until the peer closes
//   'D'  discard: everything is read and dropped
// Anything else closes the connection. Prints `READY <json>` on stdout once listening. Exits when stdin
// closes (its parent went away), on SIGTERM/SIGINT, or after the maximum lifetime.
import net from 'node:net';

function parseArgs(argv) {
  const o = { port: 0, host: '127.0.0.1', maxLifetimeS: 600 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`missing value for ${a}`);
      return x;
    };
    if (a === '--port') o.port = Number(v());
    else if (a === '--host') o.host = v();
    else if (a === '--max-lifetime-s') o.maxLifetimeS = Number(v());
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw new Error('--port must be 1..65535');
  if (!(o.maxLifetimeS > 0)) throw new Error('--max-lifetime-s must be > 0');
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const CHUNK = Buffer.alloc(256 * 1024, 0x61);
let exiting = false;
let accepted = 0;
let acceptErrors = 0;

function exit(code, why) {
  if (exiting) return;
  exiting = true;
  if (why) process.stderr.write(`userspace-echo-server: exiting (${why}); accepted ${accepted} connections\n`);
  try {
    server.close();
  } catch {
    /* ignore */
  }
  setTimeout(() => process.exit(code), 50).unref();
}

setTimeout(() => exit(0, `max lifetime ${opts.maxLifetimeS}s reached`), opts.maxLifetimeS * 1000).unref();
process.stdin.on('end', () => exit(0, 'stdin closed'));
process.stdin.on('close', () => exit(0, 'stdin closed'));
process.stdin.on('error', () => exit(0, 'stdin error'));
process.stdin.resume();
process.on('SIGTERM', () => exit(0, 'SIGTERM'));
process.on('SIGINT', () => exit(0, 'SIGINT'));

function echo(sock, first) {
  const write = (buf) => {
    if (buf.length > 0 && !sock.write(buf)) {
      sock.pause();
      sock.once('drain', () => sock.resume());
    }
  };
  write(first);
  sock.on('data', write);
}

function source(sock) {
  const pump = () => {
    while (!sock.destroyed && sock.writable) {
      if (!sock.write(CHUNK)) {
        sock.once('drain', pump);
        return;
      }
    }
  };
  sock.on('data', () => undefined); // ignore anything further
  pump();
}

const server = net.createServer({ noDelay: true }, (sock) => {
  accepted++;
  sock.on('error', () => undefined);
  sock.once('data', (buf) => {
    const mode = buf[0];
    const rest = buf.subarray(1);
    if (mode === 0x45 /* E */) echo(sock, rest);
    else if (mode === 0x53 /* S */) source(sock);
    else if (mode === 0x44 /* D */) sock.on('data', () => undefined);
    else sock.destroy();
  });
});
server.on('error', (e) => {
  // EMFILE/ENFILE on accept: keep serving the connections we have.
  acceptErrors++;
  if (acceptErrors <= 5) process.stderr.write(`userspace-echo-server: ${e.message}\n`);
  if (!server.listening) exit(1, 'listen failed');
});
server.listen({ host: opts.host, port: opts.port, backlog: 4096, exclusive: true }, () => {
  process.stdout.write(`READY ${JSON.stringify({ host: opts.host, port: opts.port, pid: process.pid })}\n`);
});
