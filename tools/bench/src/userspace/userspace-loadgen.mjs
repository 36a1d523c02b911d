#!/usr/bin/env node
// Load generator of the userspace-proxy benchmark. Plain Node (no build), run inside the bench's
// network namespace against userspace-echo-server.mjs, either directly or through a proxy:
//
//   node userspace-loadgen.mjs --port P --mode MODE [--host 127.0.0.1] [options]
//
// Modes (each prints exactly one `RESULT <json>` line on stdout, except idle):
//   probe  one connection, one echo round trip; exit 0 when it worked, 1 otherwise
//   bulk   --conns N connections that each stream from the server ('S') for --warmup-s + --seconds;
//          bytes received during the --seconds window
//   rr     --conns N connections doing --size-byte echo ping-pong (one request outstanding per
//          connection); requests completed in the window and their latency percentiles
//   cps    --concurrency C workers doing connect, 16-byte echo, close, back to back; connections
//          completed in the window and their latency percentiles
//   idle   holds up to --conns N connections. Line commands on stdin: `OPEN` opens them (--concurrency
//          at a time, each checked with a 1-byte echo; gives up after --max-failures failures or
//          --open-limit-s) and prints `OPENED <json>`; `VERIFY` does a 1-byte echo on every held
//          connection and prints `VERIFIED <json>`; `CLOSE` closes everything and exits
// bulk, rr and cps also print `MARK {"at":"start"}` / `MARK {"at":"end"}` when their measurement window
// starts and ends, so the parent can sample the proxy's CPU time over exactly that window.
// Every loop is bounded in count and time; every socket operation has a --timeout-ms. Exits when stdin
// closes (its parent went away) or after --max-lifetime-s.
import net from 'node:net';

function parseArgs(argv) {
  const o = {
    host: '127.0.0.1',
    port: 0,
    mode: '',
    conns: 1,
    seconds: 3,
    warmupS: 0.5,
    size: 64,
    concurrency: 32,
    timeoutMs: 5000,
    maxFailures: 200,
    openLimitS: 45,
    maxLifetimeS: 300,
  };
  const num = new Set(['port', 'conns', 'seconds', 'warmupS', 'size', 'concurrency', 'timeoutMs', 'maxFailures', 'openLimitS', 'maxLifetimeS']);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const key = a.slice(2).replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(key in o)) throw new Error(`unknown option ${a}`);
    const v = argv[++i];
    if (v === undefined) throw new Error(`missing value for ${a}`);
    o[key] = num.has(key) ? Number(v) : v;
    if (num.has(key) && !Number.isFinite(o[key])) throw new Error(`bad number for ${a}: ${v}`);
  }
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw new Error('--port must be 1..65535');
  if (!['probe', 'bulk', 'rr', 'cps', 'idle'].includes(o.mode)) throw new Error('--mode must be probe|bulk|rr|cps|idle');
  if (!(o.conns >= 1 && o.conns <= 20000)) throw new Error('--conns must be 1..20000');
  if (!(o.seconds > 0 && o.seconds <= 60)) throw new Error('--seconds must be in (0, 60]');
  if (!(o.concurrency >= 1 && o.concurrency <= 1024)) throw new Error('--concurrency must be 1..1024');
  if (!(o.size >= 1 && o.size <= 65536)) throw new Error('--size must be 1..65536');
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const now = () => performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sockets = new Set();

function out(tag, obj) {
  process.stdout.write(`${tag} ${JSON.stringify(obj)}\n`);
}

/**
 * `MARK` lines tell the parent when the measurement window starts and ends (it samples the proxy's CPU
 * time then). The returned function is called when the run is over: it prints a still pending end mark
 * at once (the last response can beat the end timer), or nothing if the window never started.
 */
function markWindow(startAt, endAt) {
  let started = false;
  let ended = false;
  const end = () => {
    if (started && !ended) {
      ended = true;
      out('MARK', { at: 'end' });
    }
  };
  const a = setTimeout(() => {
    started = true;
    out('MARK', { at: 'start' });
  }, Math.max(0, startAt - now()));
  const b = setTimeout(end, Math.max(0, endAt - now()));
  return () => {
    clearTimeout(a);
    clearTimeout(b);
    end();
  };
}

function bail(code, why) {
  if (why) process.stderr.write(`userspace-loadgen ${opts.mode}: ${why}\n`);
  for (const s of sockets) s.destroy();
  setTimeout(() => process.exit(code), 20).unref();
}

setTimeout(() => bail(3, `max lifetime ${opts.maxLifetimeS}s reached`), opts.maxLifetimeS * 1000).unref();
process.stdin.on('end', () => bail(0, opts.mode === 'idle' ? '' : 'stdin closed'));
process.stdin.on('error', () => bail(0, 'stdin error'));

// Line commands on stdin (idle mode); reading also lets us notice the parent going away.
const lines = [];
let wake = null;
let lineBuf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  lineBuf += d;
  let i;
  while ((i = lineBuf.indexOf('\n')) >= 0 && lines.length < 100) {
    lines.push(lineBuf.slice(0, i).trim());
    lineBuf = lineBuf.slice(i + 1);
  }
  wake?.();
});

function countError(errors, e) {
  const code = (e && (e.code || e.message)) || String(e);
  errors[code] = (errors[code] ?? 0) + 1;
}

/** Connects with a timeout; resolves with the connected socket (tracked in `sockets`). */
function connect() {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: opts.host, port: opts.port, noDelay: true });
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    const timer = setTimeout(() => {
      s.destroy();
      reject(Object.assign(new Error('connect timeout'), { code: 'CONNECT_TIMEOUT' }));
    }, opts.timeoutMs);
    s.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    s.once('connect', () => {
      clearTimeout(timer);
      s.removeAllListeners('error');
      s.on('error', () => undefined);
      resolve(s);
    });
  });
}

/** Writes `payload` and resolves once `expect` bytes came back (echo), bounded by the timeout. */
function roundTrip(s, payload, expect) {
  return new Promise((resolve, reject) => {
    let got = 0;
    const done = (err) => {
      clearTimeout(timer);
      s.removeListener('data', onData);
      s.removeListener('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onData = (b) => {
      got += b.length;
      if (got >= expect) done();
    };
    const onClose = () => done(Object.assign(new Error('closed by peer'), { code: 'CLOSED_BY_PEER' }));
    const timer = setTimeout(() => done(Object.assign(new Error('echo timeout'), { code: 'ECHO_TIMEOUT' })), opts.timeoutMs);
    s.on('data', onData);
    s.once('close', onClose);
    s.write(payload);
  });
}

function percentiles(arr, n) {
  if (n === 0) return { p50Us: null, p99Us: null, p999Us: null, maxUs: null, over100ms: 0 };
  const a = arr.subarray(0, n).sort();
  const at = (q) => Math.round(a[Math.min(n - 1, Math.floor(q * n))] * 1000);
  let over = 0;
  for (let i = n - 1; i >= 0 && a[i] > 100; i--) over++;
  return { p50Us: at(0.5), p99Us: at(0.99), p999Us: at(0.999), maxUs: Math.round(a[n - 1] * 1000), over100ms: over };
}

async function probe() {
  const s = await connect();
  await roundTrip(s, Buffer.from('Eping'), 4);
  s.destroy();
  out('RESULT', { ok: true });
}

async function bulk() {
  const errors = {};
  const socks = await Promise.all(Array.from({ length: opts.conns }, () => connect()));
  let total = 0;
  let closedEarly = 0;
  for (const s of socks) {
    s.on('data', (b) => (total += b.length));
    s.once('close', () => closedEarly++);
    s.on('error', (e) => countError(errors, e));
    s.write('S');
  }
  await sleep(opts.warmupS * 1000);
  const startBytes = total;
  const t0 = now();
  out('MARK', { at: 'start' });
  await sleep(opts.seconds * 1000);
  const bytes = total - startBytes;
  out('MARK', { at: 'end' });
  const seconds = (now() - t0) / 1000;
  const early = closedEarly;
  for (const s of socks) s.destroy();
  out('RESULT', { conns: opts.conns, bytes, seconds, mbPerS: bytes / 1e6 / seconds, closedEarly: early, errors });
}

async function rr() {
  const errors = {};
  const socks = await Promise.all(Array.from({ length: opts.conns }, () => connect()));
  const lat = new Float64Array(2_000_000);
  let n = 0;
  let requests = 0;
  const start = now();
  const windowStart = start + opts.warmupS * 1000;
  const end = windowStart + opts.seconds * 1000;
  const unmark = markWindow(windowStart, end);
  const msg = Buffer.alloc(opts.size, 0x62);
  const loops = socks.map(
    (s) =>
      new Promise((resolve) => {
        let got = 0;
        let sent = 0;
        const send = () => {
          got = 0;
          sent = now();
          s.write(msg);
        };
        const stall = setTimeout(() => {
          countError(errors, { code: 'RR_STALL' });
          s.destroy();
        }, end - start + opts.timeoutMs);
        s.on('data', (b) => {
          got += b.length;
          if (got < opts.size) return;
          const t = now();
          if (t >= windowStart && t < end) {
            requests++;
            if (n < lat.length) lat[n++] = t - sent;
          }
          if (t < end) send();
          else {
            clearTimeout(stall);
            resolve();
          }
        });
        s.on('error', (e) => countError(errors, e));
        s.once('close', () => {
          clearTimeout(stall);
          resolve();
        });
        s.write('E');
        send();
      }),
  );
  await Promise.all(loops);
  const seconds = Math.min(opts.seconds, (now() - windowStart) / 1000);
  unmark();
  for (const s of socks) s.destroy();
  out('RESULT', { conns: opts.conns, size: opts.size, requests, seconds, perS: requests / seconds, ...percentiles(lat, n), errors });
}

async function cps() {
  const errors = {};
  const lat = new Float64Array(2_000_000);
  let n = 0;
  let completed = 0;
  let failed = 0;
  let attempts = 0;
  const start = now();
  const windowStart = start + opts.warmupS * 1000;
  const end = windowStart + opts.seconds * 1000;
  const unmark = markWindow(windowStart, end);
  const MAX_ATTEMPTS = 5_000_000;
  const payload = Buffer.from('E0123456789abcdef');
  const one = () =>
    new Promise((resolve) => {
      const t0 = now();
      let got = 0;
      let settled = false;
      const s = net.connect({ host: opts.host, port: opts.port, noDelay: true });
      sockets.add(s);
      const finish = (err) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        sockets.delete(s);
        const t = now();
        if (err) {
          s.destroy();
          if (t >= windowStart && t < end) {
            failed++;
            countError(errors, err);
          }
        } else if (t >= windowStart && t < end) {
          completed++;
          if (n < lat.length) lat[n++] = t - t0;
        }
        resolve();
      };
      const timer = setTimeout(() => finish({ code: 'TIMEOUT' }), opts.timeoutMs);
      s.on('error', (e) => finish(e));
      s.once('connect', () => s.write(payload));
      s.on('data', (b) => {
        got += b.length;
        if (got >= payload.length - 1) s.end();
      });
      s.once('close', () => finish(got >= payload.length - 1 ? undefined : { code: 'CLOSED_BEFORE_ECHO' }));
    });
  const worker = async () => {
    while (now() < end && attempts < MAX_ATTEMPTS) {
      attempts++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  unmark();
  out('RESULT', { concurrency: opts.concurrency, completed, failed, attempts, seconds: opts.seconds, perS: completed / opts.seconds, ...percentiles(lat, n), errors });
}

async function idle() {
  const held = [];
  let closedWhileHeld = 0;
  const nextCommand = async () => {
    for (;;) {
      if (lines.length > 0) return lines.shift();
      await new Promise((r) => (wake = r));
      wake = null;
    }
  };
  for (let cmdNo = 0; cmdNo < 10; cmdNo++) {
    const cmd = await nextCommand();
    if (cmd === 'OPEN') {
      const errors = {};
      let next = 0;
      let failed = 0;
      const lat = new Float64Array(opts.conns);
      let n = 0;
      const t0 = now();
      const deadline = t0 + opts.openLimitS * 1000;
      let stopReason = '';
      const worker = async () => {
        while (next < opts.conns) {
          if (failed >= opts.maxFailures) {
            stopReason ||= `${failed} failures`;
            return;
          }
          if (now() >= deadline) {
            stopReason ||= `open time limit ${opts.openLimitS}s`;
            return;
          }
          next++;
          let s;
          const started = now();
          try {
            s = await connect();
            await roundTrip(s, Buffer.from('Ex'), 1);
            if (n < lat.length) lat[n++] = now() - started;
            held.push(s);
            s.once('close', () => closedWhileHeld++);
          } catch (e) {
            s?.destroy();
            failed++;
            countError(errors, e);
          }
        }
      };
      await Promise.all(Array.from({ length: opts.concurrency }, worker));
      out('OPENED', { target: opts.conns, opened: held.length, failed, ms: now() - t0, stopReason, errors, latency: percentiles(lat, n) });
    } else if (cmd === 'VERIFY') {
      const errors = {};
      let ok = 0;
      let failed = 0;
      let idx = 0;
      const t0 = now();
      const worker = async () => {
        while (idx < held.length) {
          const s = held[idx++];
          try {
            if (s.destroyed) throw Object.assign(new Error('closed while idle'), { code: 'CLOSED_WHILE_IDLE' });
            await roundTrip(s, Buffer.from('y'), 1);
            ok++;
          } catch (e) {
            failed++;
            countError(errors, e);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(256, opts.concurrency * 4) }, worker));
      out('VERIFIED', { held: held.length, ok, failed, closedWhileHeld, ms: now() - t0, errors });
    } else {
      break; // CLOSE, or anything unexpected
    }
  }
  bail(0, '');
}

const modes = { probe, bulk, rr, cps, idle };
try {
  await modes[opts.mode]();
  if (opts.mode !== 'idle') bail(0, '');
} catch (e) {
  out('RESULT', { ok: false, error: e.code || e.message });
  bail(1, e.message);
}
