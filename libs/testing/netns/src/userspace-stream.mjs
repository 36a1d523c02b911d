#!/usr/bin/env node
// Long-transfer TCP server and client for the userspace-proxy e2e suite. Plain Node (no build), run
// inside a pod namespace (server) or any namespace of a simulated node (client):
//
//   node userspace-stream.mjs server --name pod1 --port 8090 [--max-lifetime-s 600]
//   node userspace-stream.mjs client --host 10.96.0.40 --port 9000 --bytes 2097152 --duration-ms 8000 [--timeout-ms 30000]
//
// Server: on every connection it writes `<name> <remoteAddr>:<remotePort>\n` at once (so probe.mjs can
// use it like the echo server), then waits for `START <bytes> <durationMs>\n` and streams exactly
// <bytes> bytes of a fixed pattern (byte at offset i = i % 251), paced evenly over <durationMs>, and
// ends the connection. A connection that sends nothing is closed after 30 s.
// Prints `READY <json>` once it listens; exits when stdin closes, on SIGTERM/SIGINT or after the max
// lifetime.
//
// Client: connects, reads the header line, sends START, verifies every byte of the pattern, and prints
// JSON lines on stdout: {"event":"header",pod,source,ms}, {"event":"progress",bytes,ms} every 200 ms,
// and finally {"event":"done",ok,bytes,expected,patternOk,ended,error,ms}; then exits 0 (errors are
// data). Bounded by --timeout-ms, and fails with STALLED when no byte arrives for 8 s.
import net from 'node:net';

const PATTERN_MOD = 251;
const TICK_MS = 50;

function parseArgs(argv) {
  const [mode, ...rest] = argv;
  const o = { mode, name: '', host: '', port: 0, bytes: 0, durationMs: 0, timeoutMs: 30_000, maxLifetimeS: 600 };
  const keys = {
    '--name': ['name', String],
    '--host': ['host', String],
    '--port': ['port', Number],
    '--bytes': ['bytes', Number],
    '--duration-ms': ['durationMs', Number],
    '--timeout-ms': ['timeoutMs', Number],
    '--max-lifetime-s': ['maxLifetimeS', Number],
  };
  for (let i = 0; i < rest.length; i++) {
    const k = keys[rest[i]];
    if (!k) throw new Error(`unknown argument ${rest[i]}`);
    const v = rest[++i];
    if (v === undefined) throw new Error(`missing value for ${rest[i - 1]}`);
    o[k[0]] = k[1](v);
  }
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw new Error('bad --port');
  if (mode === 'server') {
    if (!o.name) throw new Error('--name is required');
    if (!(o.maxLifetimeS > 0)) throw new Error('--max-lifetime-s must be > 0');
  } else if (mode === 'client') {
    if (!o.host) throw new Error('--host is required');
    if (!Number.isInteger(o.bytes) || o.bytes < 1 || o.bytes > 1 << 30) throw new Error('--bytes must be 1..2^30');
    if (!(o.durationMs >= 0 && o.durationMs <= 120_000)) throw new Error('--duration-ms must be 0..120000');
    if (!(o.timeoutMs > 0 && o.timeoutMs <= 300_000)) throw new Error('--timeout-ms must be in (0, 300000]');
  } else throw new Error('mode must be server or client');
  return o;
}

const norm = (addr) => (typeof addr === 'string' && addr.startsWith('::ffff:') ? addr.slice(7) : addr);

/** `len` bytes of the pattern starting at absolute offset `offset`. */
function patternChunk(offset, len) {
  const b = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) b[i] = (offset + i) % PATTERN_MOD;
  return b;
}

function server(o) {
  let exiting = false;
  const srv = net.createServer((sock) => {
    sock.on('error', () => undefined);
    sock.setTimeout(30_000, () => sock.destroy());
    sock.write(`${o.name} ${norm(sock.remoteAddress)}:${sock.remotePort}\n`);
    let buf = '';
    let started = false;
    sock.setEncoding('utf8');
    sock.on('data', (d) => {
      if (started) return;
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0) {
        if (buf.length > 200) sock.destroy();
        return;
      }
      const m = /^START (\d+) (\d+)$/.exec(buf.slice(0, nl).trim());
      if (!m) return void sock.destroy();
      started = true;
      sock.setTimeout(0);
      stream(sock, Number(m[1]), Number(m[2]));
    });
  });
  const stream = (sock, total, durationMs) => {
    const ticks = Math.max(1, Math.ceil(durationMs / TICK_MS));
    const per = Math.max(1, Math.ceil(total / ticks));
    let sent = 0;
    let waiting = false;
    const timer = setInterval(() => {
      if (sock.destroyed) return void clearInterval(timer);
      if (waiting) return; // back-pressure: the peer (the proxy) has not taken the last chunk yet
      const n = Math.min(per, total - sent);
      const more = sock.write(patternChunk(sent, n));
      sent += n;
      if (sent >= total) {
        clearInterval(timer);
        sock.end();
        return;
      }
      if (!more) {
        waiting = true;
        sock.once('drain', () => (waiting = false));
      }
    }, TICK_MS);
    sock.on('close', () => clearInterval(timer));
  };
  const exit = (code, why) => {
    if (exiting) return;
    exiting = true;
    if (why) process.stderr.write(`userspace-stream ${o.name}: exiting: ${why}\n`);
    srv.close();
    setTimeout(() => process.exit(code), 50).unref();
  };
  setTimeout(() => exit(0, `max lifetime ${o.maxLifetimeS}s reached`), o.maxLifetimeS * 1000).unref();
  process.stdin.on('end', () => exit(0, 'stdin closed'));
  process.stdin.on('close', () => exit(0, 'stdin closed'));
  process.stdin.on('error', () => exit(0, 'stdin error'));
  process.stdin.resume();
  process.on('SIGTERM', () => exit(0, 'SIGTERM'));
  process.on('SIGINT', () => exit(0, 'SIGINT'));
  srv.on('error', (e) => {
    process.stderr.write(`userspace-stream ${o.name}: ${e.message}\n`);
    exit(1);
  });
  srv.listen({ host: '0.0.0.0', port: o.port, exclusive: true }, () => {
    process.stdout.write(`READY ${JSON.stringify({ name: o.name, port: o.port, pid: process.pid })}\n`);
  });
}

function client(o) {
  const started = Date.now();
  const ms = () => Date.now() - started;
  const emit = (obj) => process.stdout.write(`${JSON.stringify({ ...obj, ms: ms() })}\n`);
  let header = '';
  let gotHeader = false;
  let received = 0;
  let patternOk = true;
  let firstBad = null;
  let ended = false;
  let done = false;
  let lastData = Date.now();
  const finish = (error) => {
    if (done) return;
    done = true;
    clearInterval(progress);
    clearTimeout(overall);
    sock.destroy();
    const ok = !error && received === o.bytes && patternOk;
    emit({ event: 'done', ok, bytes: received, expected: o.bytes, patternOk, firstBad, ended, error: error ?? null });
    setTimeout(() => process.exit(0), 20).unref();
  };
  const sock = net.connect({ host: o.host, port: o.port });
  const overall = setTimeout(() => finish('TIMEOUT'), o.timeoutMs);
  const progress = setInterval(() => {
    if (gotHeader) emit({ event: 'progress', bytes: received });
    if (Date.now() - lastData > 8000) finish(gotHeader ? 'STALLED' : 'NO_HEADER');
  }, 200);
  sock.on('connect', () => emit({ event: 'connected', local: `${norm(sock.localAddress)}:${sock.localPort}` }));
  sock.on('data', (d) => {
    lastData = Date.now();
    let data = d;
    if (!gotHeader) {
      const nl = data.indexOf(0x0a);
      if (nl < 0) {
        header += data.toString('utf8');
        return;
      }
      header += data.subarray(0, nl).toString('utf8');
      data = data.subarray(nl + 1);
      gotHeader = true;
      const [pod, hostPort] = header.trim().split(/\s+/);
      const i = (hostPort ?? '').lastIndexOf(':');
      emit({ event: 'header', pod, source: i > 0 ? hostPort.slice(0, i) : hostPort });
      sock.write(`START ${o.bytes} ${o.durationMs}\n`);
    }
    for (let k = 0; k < data.length; k++) {
      if (patternOk && data[k] !== (received + k) % PATTERN_MOD) {
        patternOk = false;
        firstBad = received + k;
      }
    }
    received += data.length;
    if (received > o.bytes) finish('TOO_MANY_BYTES');
    else if (received === o.bytes) finish();
  });
  sock.on('end', () => {
    ended = true;
    finish(received === o.bytes ? undefined : 'EARLY_EOF');
  });
  sock.on('error', (e) => finish(e.code ?? e.message));
}

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`userspace-stream: ${e.message}\n`);
  process.exit(2);
}
if (opts.mode === 'server') server(opts);
else client(opts);
