#!/usr/bin/env node
// Bounded traffic probe for the netns harness. Plain Node (no build), run inside a namespace:
//
//   node probe.mjs --proto tcp --host 10.96.0.10 --port 80 [--count 200] [--timeout-ms 1000]
//                  [--concurrency 1] [--bind 192.168.50.3] [--sport 40000] [--interval-ms 0]
//                  [--max-total-ms 60000] [--stop-after-errors N] [--stop-file PATH]
//   node probe.mjs '{"proto":"udp","host":"10.96.0.53","port":53,"count":3,"sport":40000}'
//
// Every try is bounded by --timeout-ms and the whole run by --max-total-ms (tries not started by then
// count as errors `NOT_RUN`; so do the tries left once --stop-after-errors N errors happened, which
// keeps a broken datapath from costing count × timeout). With --stop-file the run ends early, before
// the next try, once that file exists (a flow that lasts exactly as long as the test needs it; `count`
// then reports the tries made). TCP: one connection per try, the echo server's first line is the answer.
// UDP: one request/response per try on a connected socket (ICMP port unreachable => ECONNREFUSED); with
// --sport every try reuses one socket bound to that source port (same conntrack flow), else each try
// uses a new socket (new ephemeral port, new flow).
// Prints one JSON summary on stdout and exits 0 (errors are data, not failures); exits 2 on bad usage.
import net from 'node:net';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';

const DEFAULTS = {
  proto: 'tcp',
  host: '',
  port: 0,
  count: 1,
  timeoutMs: 1000,
  concurrency: 1,
  bind: undefined,
  sport: undefined,
  intervalMs: 0,
  maxTotalMs: 60_000,
  stopAfterErrors: 0,
  stopFile: undefined,
};

function parseArgs(argv) {
  if (argv.length === 1 && argv[0].trim().startsWith('{')) return { ...DEFAULTS, ...JSON.parse(argv[0]) };
  const o = { ...DEFAULTS };
  const keys = {
    '--proto': ['proto', String],
    '--host': ['host', String],
    '--port': ['port', Number],
    '--count': ['count', Number],
    '--timeout-ms': ['timeoutMs', Number],
    '--concurrency': ['concurrency', Number],
    '--bind': ['bind', String],
    '--sport': ['sport', Number],
    '--interval-ms': ['intervalMs', Number],
    '--max-total-ms': ['maxTotalMs', Number],
    '--stop-after-errors': ['stopAfterErrors', Number],
    '--stop-file': ['stopFile', String],
  };
  for (let i = 0; i < argv.length; i++) {
    const k = keys[argv[i]];
    if (!k) throw new Error(`unknown argument ${argv[i]}`);
    const v = argv[++i];
    if (v === undefined) throw new Error(`missing value for ${argv[i - 1]}`);
    o[k[0]] = k[1](v);
  }
  return o;
}

function validate(o) {
  if (o.proto !== 'tcp' && o.proto !== 'udp') throw new Error('proto must be tcp or udp');
  if (!o.host) throw new Error('host is required');
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw new Error('bad port');
  if (!Number.isInteger(o.count) || o.count < 1 || o.count > 100_000) throw new Error('count must be 1..100000');
  if (!(o.timeoutMs > 0 && o.timeoutMs <= 60_000)) throw new Error('timeoutMs must be in (0, 60000]');
  if (!Number.isInteger(o.concurrency) || o.concurrency < 1 || o.concurrency > 256) throw new Error('concurrency must be 1..256');
  if (!(o.maxTotalMs > 0 && o.maxTotalMs <= 600_000)) throw new Error('maxTotalMs must be in (0, 600000]');
  if (!Number.isInteger(o.stopAfterErrors) || o.stopAfterErrors < 0) throw new Error('stopAfterErrors must be >= 0 (0 = never)');
  if (o.stopFile !== undefined && (typeof o.stopFile !== 'string' || o.stopFile === '')) throw new Error('stopFile must be a path');
  if (o.sport !== undefined && o.concurrency !== 1) throw new Error('--sport needs concurrency 1');
  if (o.sport !== undefined && o.proto !== 'udp') throw new Error('--sport is only supported for udp');
}

const norm = (addr) => (typeof addr === 'string' && addr.startsWith('::ffff:') ? addr.slice(7) : addr);

/** Parses `<pod> <addr>:<port>[ nonce]`; the address may be IPv6 (split at the last colon). */
function parseAnswer(line) {
  const [pod, hostPort, nonce] = line.trim().split(/\s+/);
  if (!pod || !hostPort) return undefined;
  const i = hostPort.lastIndexOf(':');
  if (i < 0) return undefined;
  return { pod, source: hostPort.slice(0, i), sourcePort: Number(hostPort.slice(i + 1)), nonce };
}

function tcpTry(o) {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
    let data = '';
    let done = false;
    const finish = (r) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...r, ms: Math.round(ms() * 100) / 100 });
    };
    const sock = net.connect({ host: o.host, port: o.port, ...(o.bind ? { localAddress: o.bind } : {}) });
    const timer = setTimeout(() => finish({ error: 'TIMEOUT' }), o.timeoutMs);
    sock.setEncoding('utf8');
    sock.on('data', (d) => {
      data += d;
      if (data.includes('\n')) {
        const a = parseAnswer(data.split('\n')[0]);
        finish(a ? { ...a, local: `${norm(sock.localAddress)}:${sock.localPort}` } : { error: 'BAD_ANSWER', raw: data.slice(0, 100) });
      }
    });
    sock.on('end', () => {
      const a = parseAnswer(data);
      finish(a ? a : { error: 'EMPTY_ANSWER' });
    });
    sock.on('error', (e) => finish({ error: e.code ?? e.message }));
  });
}

let nonceCounter = 0;

function udpSocket(o) {
  return new Promise((resolve, reject) => {
    const type = net.isIPv6(o.host) ? 'udp6' : 'udp4';
    const sock = dgram.createSocket({ type, reuseAddr: o.sport !== undefined });
    const onErr = (e) => {
      sock.close();
      reject(e);
    };
    sock.once('error', onErr);
    const connect = () =>
      sock.connect(o.port, o.host, () => {
        sock.removeListener('error', onErr);
        resolve(sock);
      });
    if (o.bind !== undefined || o.sport !== undefined) {
      sock.bind({ address: o.bind, port: o.sport ?? 0 }, connect);
    } else connect();
  });
}

function udpTry(o, sock) {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
    const nonce = `n${process.pid}x${++nonceCounter}`;
    let done = false;
    const finish = (r) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.removeListener('message', onMsg);
      sock.removeListener('error', onErr);
      resolve({ ...r, ms: Math.round(ms() * 100) / 100 });
    };
    const onMsg = (msg) => {
      const a = parseAnswer(msg.toString('utf8'));
      if (!a) return finish({ error: 'BAD_ANSWER', raw: msg.toString('utf8', 0, 100) });
      if (a.nonce !== nonce) return; // late answer to an earlier try
      const addr = sock.address();
      finish({ pod: a.pod, source: a.source, sourcePort: a.sourcePort, local: `${norm(addr.address)}:${addr.port}` });
    };
    const onErr = (e) => finish({ error: e.code ?? e.message });
    const timer = setTimeout(() => finish({ error: 'TIMEOUT' }), o.timeoutMs);
    sock.on('message', onMsg);
    sock.on('error', onErr);
    sock.send(nonce, (e) => {
      if (e) finish({ error: e.code ?? e.message });
    });
  });
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
    validate(o);
  } catch (e) {
    process.stderr.write(`probe: ${e.message}\n`);
    process.exit(2);
  }
  const started = Date.now();
  const deadline = started + o.maxTotalMs;
  const tries = new Array(o.count);
  let shared; // the fixed-source-port UDP socket
  let next = 0;
  let errorCount = 0;

  const oneTry = async () => {
    if (o.proto === 'tcp') return tcpTry(o);
    if (o.sport !== undefined) {
      if (!shared) shared = await udpSocket(o);
      return udpTry(o, shared);
    }
    let sock;
    try {
      sock = await udpSocket(o);
    } catch (e) {
      return { error: e.code ?? e.message, ms: 0 };
    }
    try {
      return await udpTry(o, sock);
    } finally {
      sock.close();
    }
  };

  let stopped = false; // the stop file appeared: no further tries, and they are not counted
  const worker = async () => {
    while (next < o.count) {
      if (!stopped && o.stopFile !== undefined && existsSync(o.stopFile)) stopped = true;
      if (stopped) break;
      const i = next++;
      if (Date.now() >= deadline || (o.stopAfterErrors > 0 && errorCount >= o.stopAfterErrors)) {
        tries[i] = { error: 'NOT_RUN', ms: 0 };
        continue;
      }
      try {
        tries[i] = await oneTry();
      } catch (e) {
        tries[i] = { error: e.code ?? e.message, ms: 0 };
      }
      if (tries[i].error) errorCount++;
      if (o.intervalMs > 0 && next < o.count) await new Promise((r) => setTimeout(r, o.intervalMs));
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, o.count) }, worker));
  if (shared) shared.close();
  if (stopped) tries.length = next;

  const summary = {
    proto: o.proto,
    target: `${o.host}:${o.port}`,
    bind: o.bind ?? null,
    sport: o.sport ?? null,
    count: tries.length,
    ok: 0,
    failed: 0,
    byPod: {},
    sources: {},
    byPodSource: {},
    errors: {},
    timing: { startedAtMs: started, totalMs: Date.now() - started, minTryMs: null, maxTryMs: null, maxErrorTryMs: {} },
    tries: tries.map((t) => (t.error ? { error: t.error, ms: t.ms } : { pod: t.pod, source: t.source, sourcePort: t.sourcePort, ms: t.ms })),
  };
  const inc = (obj, k) => (obj[k] = (obj[k] ?? 0) + 1);
  for (const t of tries) {
    const tm = summary.timing;
    tm.minTryMs = tm.minTryMs === null ? t.ms : Math.min(tm.minTryMs, t.ms);
    tm.maxTryMs = tm.maxTryMs === null ? t.ms : Math.max(tm.maxTryMs, t.ms);
    if (t.error) {
      summary.failed++;
      inc(summary.errors, t.error);
      tm.maxErrorTryMs[t.error] = Math.max(tm.maxErrorTryMs[t.error] ?? 0, t.ms);
    } else {
      summary.ok++;
      inc(summary.byPod, t.pod);
      inc(summary.sources, t.source);
      inc(summary.byPodSource, `${t.pod} ${t.source}`);
    }
  }
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  // Do not let a stray socket keep us alive.
  setTimeout(() => process.exit(0), 20).unref();
}

await main();
