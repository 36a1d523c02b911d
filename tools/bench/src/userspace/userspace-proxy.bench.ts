/**
 * Benchmark of the userspace proxy (not a test): a TCP L4 proxy against a direct connection and against
 * socat, on loopback, inside a network namespace of its own. Measures
 *  - bulk throughput: 1 and 4 connections streaming from the server for a fixed time (MB/s),
 *  - request/response rate: 64-byte ping-pong on 1 and on 16 concurrent connections (req/s, latency),
 *  - new connections per second: connect, 16-byte echo, close, 32 at a time (conn/s, latency),
 *  - idle connections: up to 10,000 held open through the proxy, each checked with a byte round trip,
 *    with the time to open them and the proxy's RSS (VmRSS from /proc) while holding them,
 * and prints one table with the absolute numbers and the ratios proxy/direct and proxy/socat.
 *
 * Everything (backend server, proxies, load generators) runs inside `kpbus<pid>-node`, which the bench
 * creates and deletes; the root network namespace gets no rule, sysctl or link. Needs root (exit 2 if not).
 * Load generator and server are separate Node processes (userspace-loadgen.mjs,
 * userspace-echo-server.mjs); so is every proxy.
 *
 * Usage: node tools/bench/dist/userspace/userspace-proxy.bench.js [--proxies=kube-proxy,socat[,standin]]
 *          [--seconds=3] [--bulk-seconds=4] [--idle-conns=10000] [--socat-idle-cap=1000] [--idle-procs=4]
 *          [--keep-logs=DIR]
 * `--proxies` defaults to $KP_BENCH_PROXIES, else `kube-proxy,socat`; `direct` is always measured.
 * `standin` is userspace-standin-proxy.mjs, a naive Node pipe proxy that is NOT the product (it exists to
 * check the harness and as a baseline).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { idle, onPath, sleep } from '@kube-proxy/testing-netns';
import { KUBE_PROXY_BIN, proxyMainJs } from '../common/proxy-entry.js';
import { BenchNamespace, benchScript, cpuSeconds, describeExit, descendants, procStats, type NsChild, type ProcStats } from './userspace-harness.js';

const TAG = 'kpbus';
const ECHO_PORT = 7001;
const PORTS = { 'kube-proxy': 7080, socat: 7081, standin: 7082 } as const;
const PROXY_MAIN_JS = proxyMainJs();
const READY_TIMEOUT_MS = 20_000;

type ProxyName = keyof typeof PORTS;
type ImplName = 'direct' | ProxyName;
const PROXY_NAMES: readonly ProxyName[] = ['kube-proxy', 'socat', 'standin'];

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

function numArg(name: string, fallback: number, min: number, max: number): number {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isFinite(v) || v < min || v > max) throw new Error(`--${name} must be a number in [${min}, ${max}]`);
  return v;
}

interface Options {
  readonly proxies: readonly ProxyName[];
  readonly seconds: number;
  readonly bulkSeconds: number;
  readonly idleConns: number;
  readonly socatIdleCap: number;
  readonly idleProcs: number;
  readonly keepLogs: string | undefined;
}

function parseOptions(): Options {
  const list = arg('proxies', process.env['KP_BENCH_PROXIES'] || 'kube-proxy,socat')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && s !== 'direct');
  for (const p of list) if (!(PROXY_NAMES as readonly string[]).includes(p)) throw new Error(`unknown proxy ${JSON.stringify(p)}; choose from ${PROXY_NAMES.join(', ')}`);
  return {
    proxies: [...new Set(list as ProxyName[])],
    seconds: numArg('seconds', 3, 0.5, 20),
    bulkSeconds: numArg('bulk-seconds', 4, 0.5, 20),
    idleConns: Math.round(numArg('idle-conns', 10_000, 1, 20_000)),
    socatIdleCap: Math.round(numArg('socat-idle-cap', 1000, 0, 5000)),
    idleProcs: Math.round(numArg('idle-procs', 4, 1, 16)),
    keepLogs: arg('keep-logs', '') || undefined,
  };
}

// ---- results ---------------------------------------------------------------------------------------

interface Latency {
  p50Us: number | null;
  p99Us: number | null;
  p999Us: number | null;
  maxUs: number | null;
  over100ms: number;
}
interface BulkResult {
  bytes: number;
  mbPerS: number;
  closedEarly: number;
  errors: Record<string, number>;
}
interface RateResult extends Latency {
  perS: number;
  /** Requests (rr) or connections (cps) completed in the window. */
  requests?: number;
  completed?: number;
  failed?: number;
  errors: Record<string, number>;
}
interface IdleResult {
  target: number;
  opened: number;
  held: number;
  openMs: number;
  verifyFailed: number;
  /** Slowest per-process p99 and the overall max of connect + first echo while opening, µs. */
  openP99Us: number;
  openMaxUs: number;
  openOver100ms: number;
  stopReasons: string[];
  errors: Record<string, number>;
  before?: ProcStats;
  holding?: ProcStats;
  limitNote?: string;
}
interface ImplResult {
  name: ImplName;
  /** Proxy CPU seconds (user+system) during each step's measurement window. */
  cpu: Partial<Record<StepKey, number>>;
  started: boolean;
  reason?: string;
  bulk1?: BulkResult;
  bulk4?: BulkResult;
  rr1?: RateResult;
  rr16?: RateResult;
  cps?: RateResult;
  idle?: IdleResult;
  failures: string[];
  notes: string[];
  logWarnings?: string[];
}

// ---- the proxies under test -----------------------------------------------------------------------

interface RunningImpl {
  readonly port: number;
  readonly child?: NsChild;
  /** The process(es) doing the proxying, for RSS and fds: the watchdog's descendants. */
  pids(): number[];
}

function manifests(dir: string): void {
  writeFileSync(
    join(dir, 'bench.yaml'),
    `# userspace-proxy benchmark: one TCP service whose one endpoint is the bench's echo server.
apiVersion: v1
kind: Node
metadata:
  name: bench-node
  labels: {kubernetes.io/hostname: bench-node}
status:
  addresses:
    - {type: InternalIP, address: 127.0.0.1}
    - {type: Hostname, address: bench-node}
---
apiVersion: v1
kind: Service
metadata: {name: bench, namespace: default}
spec:
  clusterIP: 10.96.0.200
  clusterIPs: [10.96.0.200]
  ports:
    - {name: tcp, port: 80, targetPort: ${ECHO_PORT}, protocol: TCP}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: bench-1
  namespace: default
  labels: {kubernetes.io/service-name: bench}
addressType: IPv4
ports: [{name: tcp, port: ${ECHO_PORT}, protocol: TCP}]
endpoints:
  - {addresses: [127.0.0.1], conditions: {ready: true}, nodeName: bench-node}
`,
  );
}

async function startProxy(ns: BenchNamespace, name: ProxyName, workDir: string): Promise<RunningImpl> {
  const port = PORTS[name];
  let child: NsChild;
  if (name === 'kube-proxy') {
    if (!existsSync(PROXY_MAIN_JS)) throw new Error(`no build at ${PROXY_MAIN_JS}: run \`npx nx build proxy\` first`);
    const dir = join(workDir, 'manifests');
    mkdirSync(dir, { recursive: true });
    manifests(dir);
    // mkdtemp made the work dir private; the unprivileged proxy must read its manifests.
    chmodSync(workDir, 0o755);
    chmodSync(dir, 0o755);
    // As an unprivileged user it installs no capture rules (and says so): the bench measures its socket
    // path under the same kernel conditions as socat and the direct connection (no NAT, no conntrack).
    child = ns.spawn(
      'kube-proxy',
      'setpriv',
      [
        '--reuid=nobody',
        '--regid=nogroup',
        '--clear-groups',
        process.execPath,
        KUBE_PROXY_BIN,
        '--proxy-mode=userspace',
        `--manifests=${dir}`,
        '--hostname-override=bench-node',
        `--proxy-port-range=${port}-${port}`,
        '--udp-timeout=250ms',
        // Leave the (global) conntrack table size alone; the namespace could not change it anyway.
        '--conntrack-max-per-core=0',
      ],
      { watchdogLifetimeS: 600, env: { NX_NO_CLOUD: 'true', NX_DAEMON: 'false', XTABLES_LOCKFILE: join(workDir, 'xtables.lock') } },
    );
  } else if (name === 'socat') {
    // socat's default listen backlog is 5, which would turn bursts of connects into SYN retransmits
    // (1 s stalls) and measure the backlog rather than the proxy: give it the same 4096 as the others.
    child = ns.spawn('socat', 'socat', [`TCP-LISTEN:${port},fork,reuseaddr,bind=127.0.0.1,backlog=4096`, `TCP:127.0.0.1:${ECHO_PORT}`], { watchdogLifetimeS: 600 });
  } else {
    child = ns.spawn('standin', process.execPath, [benchScript('userspace-standin-proxy.mjs'), '--listen', String(port), '--target', String(ECHO_PORT)], { watchdogLifetimeS: 600 });
  }
  const impl: RunningImpl = { port, child, pids: () => (child.pid === undefined ? [] : descendants(child.pid)) };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  for (let i = 0; i < 400 && Date.now() < deadline; i++) {
    if (!child.alive()) throw new Error(`${name} exited (${describeExit(child.exitInfo)}) before serving:\n${child.stderrTail(15)}`);
    try {
      const r = await ns.runScript<{ ok: boolean; error?: string }>('probe', benchScript('userspace-loadgen.mjs'), ['--mode', 'probe', '--port', String(port), '--timeout-ms', '1000'], 5000);
      if (r.ok) return impl;
      last = r.error ?? 'probe failed';
    } catch (e) {
      last = (e as Error).message.split('\n')[0] ?? '';
    }
    await sleep(250);
  }
  throw new Error(`${name} did not serve 127.0.0.1:${port} within ${READY_TIMEOUT_MS / 1000} s (last probe: ${last}):\n${child.stderrTail(15)}`);
}

// ---- measurements ---------------------------------------------------------------------------------

type StepKey = 'bulk1' | 'bulk4' | 'rr1' | 'rr16' | 'cps';

/**
 * Runs one load-generator step to its `RESULT`, sampling the proxy's CPU time at the window's start and
 * end `MARK`s (undefined when there is no proxy process or a mark did not come).
 */
async function loadgenStep(ns: BenchNamespace, impl: RunningImpl, args: readonly string[], timeoutMs: number): Promise<{ result: Record<string, unknown>; cpuS?: number }> {
  const c = ns.spawn('loadgen', process.execPath, [benchScript('userspace-loadgen.mjs'), '--port', String(impl.port), ...args]);
  try {
    let cpuS: number | undefined;
    try {
      await c.waitLine('MARK', timeoutMs);
      const before = impl.child ? cpuSeconds(impl.pids()) : undefined;
      await c.waitLine('MARK', timeoutMs);
      if (before !== undefined) cpuS = cpuSeconds(impl.pids()) - before;
    } catch {
      /* no window marks (the step failed early): the RESULT line says why */
    }
    const result = await c.waitLine<Record<string, unknown>>('RESULT', timeoutMs);
    await Promise.race([c.exited, idle(5000)]);
    return cpuS === undefined ? { result } : { result, cpuS };
  } finally {
    await ns.stop(c);
  }
}

async function measureIdle(ns: BenchNamespace, impl: RunningImpl, target: number, procs: number): Promise<IdleResult> {
  const before = impl.child ? procStats(impl.pids()) : undefined;
  const k = Math.min(procs, target);
  const per = Math.ceil(target / k);
  const gens: NsChild[] = [];
  const res: IdleResult = { target, opened: 0, held: 0, openMs: 0, verifyFailed: 0, openP99Us: 0, openMaxUs: 0, openOver100ms: 0, stopReasons: [], errors: {} };
  if (before) res.before = before;
  try {
    for (let i = 0; i < k; i++) {
      const n = Math.min(per, target - i * per);
      if (n <= 0) break;
      gens.push(
        ns.spawn(`idle-loadgen-${i}`, process.execPath, [
          benchScript('userspace-loadgen.mjs'),
          ...['--mode', 'idle', '--port', String(impl.port), '--conns', String(n), '--concurrency', '64'],
          ...['--max-failures', '100', '--open-limit-s', '45', '--timeout-ms', '5000', '--max-lifetime-s', '180'],
        ]),
      );
    }
    await sleep(300); // let the Node processes start; commands sent earlier would wait in their stdin anyway
    const t0 = Date.now();
    for (const g of gens) g.send('OPEN');
    type Opened = { opened: number; failed: number; stopReason: string; errors: Record<string, number>; latency: Latency };
    const opened = await Promise.all(gens.map((g) => g.waitLine<Opened>('OPENED', 70_000)));
    res.openMs = Date.now() - t0;
    for (const o of opened) {
      res.opened += o.opened;
      res.openP99Us = Math.max(res.openP99Us, o.latency.p99Us ?? 0);
      res.openMaxUs = Math.max(res.openMaxUs, o.latency.maxUs ?? 0);
      res.openOver100ms += o.latency.over100ms;
      if (o.stopReason) res.stopReasons.push(o.stopReason);
      for (const [e, c] of Object.entries(o.errors)) res.errors[e] = (res.errors[e] ?? 0) + c;
    }
    await sleep(1000); // hold them idle for a moment
    if (impl.child) res.holding = procStats(impl.pids());
    for (const g of gens) g.send('VERIFY');
    type Verified = { ok: number; failed: number; errors: Record<string, number> };
    const verified = await Promise.all(gens.map((g) => g.waitLine<Verified>('VERIFIED', 70_000)));
    for (const v of verified) {
      res.held += v.ok;
      res.verifyFailed += v.failed;
      for (const [e, c] of Object.entries(v.errors)) res.errors[`verify:${e}`] = (res.errors[`verify:${e}`] ?? 0) + c;
    }
    for (const g of gens) g.send('CLOSE');
    await Promise.race([Promise.all(gens.map((g) => g.exited)), idle(10_000)]);
  } finally {
    await Promise.all(gens.map((g) => ns.stop(g)));
  }
  return res;
}

async function measure(ns: BenchNamespace, name: ImplName, impl: RunningImpl, o: Options, result: ImplResult): Promise<void> {
  const s = String(o.seconds);
  const budget = (secs: number): number => (secs + 0.5) * 1000 + 30_000;
  const steps: { key: StepKey; args: string[]; secs: number }[] = [
    { key: 'bulk1', args: ['--mode', 'bulk', '--conns', '1', '--seconds', String(o.bulkSeconds)], secs: o.bulkSeconds },
    { key: 'bulk4', args: ['--mode', 'bulk', '--conns', '4', '--seconds', String(o.bulkSeconds)], secs: o.bulkSeconds },
    { key: 'rr1', args: ['--mode', 'rr', '--conns', '1', '--size', '64', '--seconds', s], secs: o.seconds },
    { key: 'rr16', args: ['--mode', 'rr', '--conns', '16', '--size', '64', '--seconds', s], secs: o.seconds },
    { key: 'cps', args: ['--mode', 'cps', '--concurrency', '32', '--seconds', s], secs: o.seconds },
  ];
  const proxyAlive = (): boolean => !impl.child || impl.child.alive();
  for (const step of steps) {
    if (!proxyAlive()) break;
    process.stderr.write(`  ${name}: ${step.key}\n`);
    try {
      const { result: r, cpuS } = await loadgenStep(ns, impl, step.args, budget(step.secs));
      if (r['ok'] === false) throw new Error(String(r['error']));
      (result as unknown as Record<string, unknown>)[step.key] = r;
      if (cpuS !== undefined) result.cpu[step.key] = cpuS;
    } catch (e) {
      result.failures.push(`${step.key}: ${(e as Error).message.split('\n')[0]}`);
    }
    await sleep(300);
  }
  if (!proxyAlive()) return;
  let target = o.idleConns;
  if (name === 'socat' && o.socatIdleCap < target) {
    target = o.socatIdleCap;
    result.notes.push(`idle test capped at ${target.toLocaleString('en-US')} connections: socat forks one process per connection`);
  }
  if (target <= 0) return;
  process.stderr.write(`  ${name}: idle ${target}\n`);
  try {
    const r = await measureIdle(ns, impl, target, o.idleProcs);
    if (impl.child && !impl.child.alive()) {
      r.limitNote = `the proxy exited (${describeExit(impl.child.exitInfo)}) while holding them: ${nf(r.verifyFailed)} connections dropped`;
    } else if (r.held < r.target) {
      r.limitNote = explainShortfall(name, r);
    }
    result.idle = r;
  } catch (e) {
    result.failures.push(`idle: ${(e as Error).message.split('\n')[0]}`);
  }
}

/** Why fewer connections than asked for were held, from what the proxy's process shows. */
function explainShortfall(name: ImplName, r: IdleResult): string {
  const h = r.holding;
  const fdPerConn = name === 'direct' ? 1 : 2;
  if (h?.fdLimit !== undefined && h.processes === 1 && h.fds >= h.fdLimit - 64) {
    return `limited by RLIMIT_NOFILE ${h.fdLimit} (hard limit of this sandbox, cannot be raised): the proxy needs ${fdPerConn} fds per connection and had ${h.fds} open`;
  }
  const errs = Object.entries(r.errors)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([e, c]) => `${e}×${c}`)
    .join(', ');
  return `held ${r.held} of ${r.target}; stopped: ${[...new Set(r.stopReasons)].join('; ') || '–'}; errors: ${errs || '–'}`;
}

// ---- table ----------------------------------------------------------------------------------------

const nf = (x: number, digits = 0): string => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const mib = (b: number): string => `${nf(b / 1048576, 1)} MiB`;

interface Row {
  readonly label: string;
  readonly get: (r: ImplResult) => number | undefined;
  readonly fmt: (x: number) => string;
  readonly ratio: boolean;
}

function idleRss(r: ImplResult): number | undefined {
  return r.idle?.holding?.rssBytes;
}

function pssPerConn(r: ImplResult): number | undefined {
  const i = r.idle;
  if (!i?.holding || !i.before || i.held === 0) return undefined;
  return (i.holding.pssBytes - i.before.pssBytes) / i.held;
}

/** Proxy CPU seconds in a step's window divided by the units done in it. */
function cpuPer(r: ImplResult, key: StepKey, units: number | undefined): number | undefined {
  const c = r.cpu[key];
  return c === undefined || !units ? undefined : c / units;
}

const ROWS: readonly Row[] = [
  { label: 'bulk, 1 conn (MB/s)', get: (r) => r.bulk1?.mbPerS, fmt: (x) => nf(x), ratio: true },
  { label: '  proxy CPU per GB (s)', get: (r) => cpuPer(r, 'bulk1', r.bulk1 && r.bulk1.bytes / 1e9), fmt: (x) => nf(x, 2), ratio: true },
  { label: 'bulk, 4 conns (MB/s)', get: (r) => r.bulk4?.mbPerS, fmt: (x) => nf(x), ratio: true },
  { label: '  proxy CPU per GB (s)', get: (r) => cpuPer(r, 'bulk4', r.bulk4 && r.bulk4.bytes / 1e9), fmt: (x) => nf(x, 2), ratio: true },
  { label: '64 B req/resp, 1 conn (req/s)', get: (r) => r.rr1?.perS, fmt: (x) => nf(x), ratio: true },
  { label: '  proxy CPU per request (µs)', get: (r) => cpuPer(r, 'rr1', r.rr1?.requests && r.rr1.requests / 1e6), fmt: (x) => nf(x, 1), ratio: true },
  { label: '  latency p50 (µs)', get: (r) => r.rr1?.p50Us ?? undefined, fmt: (x) => nf(x), ratio: true },
  { label: '  latency p99 (µs)', get: (r) => r.rr1?.p99Us ?? undefined, fmt: (x) => nf(x), ratio: true },
  { label: '64 B req/resp, 16 conns (req/s)', get: (r) => r.rr16?.perS, fmt: (x) => nf(x), ratio: true },
  { label: '  latency p99 (µs)', get: (r) => r.rr16?.p99Us ?? undefined, fmt: (x) => nf(x), ratio: true },
  { label: '  proxy CPU per request (µs)', get: (r) => cpuPer(r, 'rr16', r.rr16?.requests && r.rr16.requests / 1e6), fmt: (x) => nf(x, 1), ratio: true },
  { label: '  latency max (µs)', get: (r) => r.rr16?.maxUs ?? undefined, fmt: (x) => nf(x), ratio: false },
  { label: 'new conns, 32 concurrent (conn/s)', get: (r) => r.cps?.perS, fmt: (x) => nf(x), ratio: true },
  { label: '  connect+echo+close p99 (µs)', get: (r) => r.cps?.p99Us ?? undefined, fmt: (x) => nf(x), ratio: true },
  { label: '  proxy CPU per connection (µs)', get: (r) => cpuPer(r, 'cps', r.cps?.completed && r.cps.completed / 1e6), fmt: (x) => nf(x, 1), ratio: true },
  { label: '  failed connections', get: (r) => r.cps?.failed, fmt: (x) => nf(x), ratio: false },
  { label: 'idle conns held / asked', get: (r) => r.idle?.held, fmt: (x) => nf(x), ratio: false },
  { label: '  time to open them (s)', get: (r) => (r.idle ? r.idle.openMs / 1000 : undefined), fmt: (x) => nf(x, 2), ratio: false },
  { label: '  open rate (conn/s)', get: (r) => (r.idle && r.idle.openMs > 0 ? r.idle.opened / (r.idle.openMs / 1000) : undefined), fmt: (x) => nf(x), ratio: true },
  { label: '  proxy VmRSS while holding', get: idleRss, fmt: mib, ratio: false },
  { label: '  proxy PSS while holding', get: (r) => r.idle?.holding?.pssBytes, fmt: mib, ratio: false },
  { label: '  proxy PSS growth per conn (KiB)', get: pssPerConn, fmt: (x) => nf(x / 1024, 1), ratio: true },
];

function ratio(a: number | undefined, b: number | undefined): string {
  // A negative (e.g. memory growth that a GC turned negative) or zero baseline has no meaningful ratio.
  if (a === undefined || b === undefined || a < 0 || b <= 0 || !Number.isFinite(a / b)) return '–';
  const r = a / b;
  return `${r >= 0.1 ? r.toFixed(2) : r.toPrecision(2)}×`;
}

function table(results: readonly ImplResult[]): string {
  const by = new Map(results.map((r) => [r.name, r] as const));
  const direct = by.get('direct');
  const socat = by.get('socat');
  const subjects = results.filter((r) => r.name === 'kube-proxy' || r.name === 'standin');
  const head = ['metric', ...results.map((r) => (r.name === 'standin' ? 'standin (not the product)' : r.name))];
  for (const s of subjects) {
    head.push(`${s.name}/direct`);
    if (socat) head.push(`${s.name}/socat`);
  }
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const row of ROWS) {
    const cells = [row.label];
    for (const r of results) {
      const v = row.get(r);
      let cell = r.started ? (v === undefined ? '–' : row.fmt(v)) : 'not run';
      if (row.label.startsWith('idle conns held') && r.idle) cell = `${nf(r.idle.held)} / ${nf(r.idle.target)}`;
      cells.push(cell);
    }
    for (const s of subjects) {
      const v = row.get(s);
      const rowRatio = row.ratio;
      cells.push(rowRatio ? ratio(v, direct ? row.get(direct) : undefined) : '–');
      if (socat) cells.push(rowRatio ? ratio(v, row.get(socat)) : '–');
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function notes(results: readonly ImplResult[]): string[] {
  const outLines: string[] = [];
  for (const r of results) {
    const items: string[] = [];
    if (!r.started) items.push(`not measured: ${r.reason}`);
    items.push(...r.notes);
    items.push(...r.failures.map((f) => `FAILED ${f}`));
    const errs = (label: string, e: Record<string, number> | undefined): void => {
      const list = Object.entries(e ?? {});
      if (list.length > 0) items.push(`${label} errors: ${list.map(([k, v]) => `${k}×${v}`).join(', ')}`);
    };
    errs('bulk 1', r.bulk1?.errors);
    errs('bulk 4', r.bulk4?.errors);
    errs('req/resp 1', r.rr1?.errors);
    errs('req/resp 16', r.rr16?.errors);
    errs('new conns', r.cps?.errors);
    for (const [k, v] of [
      ['req/resp 1', r.rr1],
      ['req/resp 16', r.rr16],
      ['new conns', r.cps],
    ] as const) {
      if (v && v.over100ms > 0) items.push(`${k}: ${v.over100ms} requests took over 100 ms (max ${nf((v.maxUs ?? 0) / 1000, 1)} ms)`);
    }
    if (r.bulk1 && r.bulk1.closedEarly > 0) items.push(`bulk 1: ${r.bulk1.closedEarly} connection(s) closed during the run`);
    if (r.bulk4 && r.bulk4.closedEarly > 0) items.push(`bulk 4: ${r.bulk4.closedEarly} connection(s) closed during the run`);
    const i = r.idle;
    if (i) {
      const h = i.holding;
      items.push(
        `idle: ${nf(i.opened)} opened of ${nf(i.target)} in ${nf(i.openMs / 1000, 2)} s, ${nf(i.held)} passed the round trip after 1 s idle` +
          (i.verifyFailed > 0 ? `, ${nf(i.verifyFailed)} failed it` : '') +
          `; connect+first echo p99 ${nf(i.openP99Us / 1000, 1)} ms, max ${nf(i.openMaxUs / 1000, 1)} ms, ${nf(i.openOver100ms)} over 100 ms` +
          (h
            ? `; proxy: ${h.processes} process(es), VmRSS ${mib(h.rssBytes)} (before: ${i.before ? mib(i.before.rssBytes) : '?'}), ` +
              `PSS ${mib(h.pssBytes)} (before: ${i.before ? mib(i.before.pssBytes) : '?'}), ${nf(h.fds)} fds of limit ${h.fdLimit ?? '?'}`
            : ''),
      );
      if (i.limitNote) items.push(`idle: ${i.limitNote}`);
      errs('idle', i.errors);
    }
    if (r.logWarnings && r.logWarnings.length > 0) items.push(`log: ${r.logWarnings.join(' | ')}`);
    if (items.length > 0) outLines.push(`- ${r.name}: ${items.join('\n  ')}`);
  }
  return outLines;
}

/** Distinct error-ish lines of a proxy's log (first 5), for the notes. */
function logWarnings(log: string): string[] {
  const seen = new Map<string, number>();
  for (const line of log.split('\n')) {
    if (!/error|EMFILE|ENFILE|warn|fail/i.test(line)) continue;
    const key = line.replace(/\d+/g, 'N').slice(0, 200);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen.entries()].slice(0, 5).map(([l, n]) => (n > 1 ? `${n}× ${l}` : l));
}

// ---- main -----------------------------------------------------------------------------------------

/** Share of all CPUs busy (not idle, not iowait) over one second, from /proc/stat, in percent. */
async function othersBusy(): Promise<number> {
  const sample = (): { busy: number; total: number } => {
    const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1, 9).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
  };
  const a = sample();
  await sleep(1000);
  const b = sample();
  return b.total > a.total ? (100 * (b.busy - a.busy)) / (b.total - a.total) : 0;
}

/** Starts one implementation (nothing for `direct`), measures it, stops it and keeps its log warnings. */
async function runImpl(ns: BenchNamespace, name: ImplName, workDir: string, o: Options): Promise<ImplResult> {
  const result: ImplResult = { name, cpu: {}, started: false, failures: [], notes: [] };
  process.stderr.write(`${name}:\n`);
  if (name === 'socat' && !onPath('socat')) {
    result.reason = 'socat is not installed';
    return result;
  }
  let impl: RunningImpl;
  try {
    impl = name === 'direct' ? { port: ECHO_PORT, pids: () => [] } : await startProxy(ns, name, workDir);
  } catch (e) {
    result.reason = `did not start: ${(e as Error).message}`;
    process.stderr.write(`  ${result.reason}\n`);
    return result;
  }
  result.started = true;
  try {
    await measure(ns, name, impl, o, result);
  } finally {
    if (impl.child) {
      if (!impl.child.alive()) result.failures.push(`proxy exited during the run (${describeExit(impl.child.exitInfo)}):\n${impl.child.stderrTail(10)}`);
      await ns.stop(impl.child);
      result.logWarnings = logWarnings(impl.child.stderr() + impl.child.stdout());
      if (o.keepLogs) {
        mkdirSync(o.keepLogs, { recursive: true });
        writeFileSync(join(o.keepLogs, `${name}.log`), impl.child.stderr() + impl.child.stdout());
      }
    }
  }
  await sleep(500);
  return result;
}

/** The report on stdout: the run's conditions, the table, and how to read it. */
function reportText(results: readonly ImplResult[], o: Options, elapsedMs: number, busyStart: number, busyEnd: number): string {
  const socatVersion = onPath('socat') ? (spawnSync('socat', ['-V'], { encoding: 'utf8' }).stdout.match(/socat version (\S+)/)?.[1] ?? '?') : 'absent';
  const out: string[] = [];
  out.push(
    `userspace proxy benchmark — ${new Date().toISOString()}, node ${process.version}, socat ${socatVersion}, ` +
      `${cpus().length} CPUs (everything shares them), loopback in a private netns, one run; ` +
      `bulk ${o.bulkSeconds} s, others ${o.seconds} s each after 0.5 s warm-up; total ${nf(elapsedMs / 1000, 0)} s; ` +
      `CPU used by other work in the 1 s before and after: ${busyStart.toFixed(0)}% / ${busyEnd.toFixed(0)}%`,
  );
  if (Math.max(busyStart, busyEnd) > 25) {
    out.push(
      'WARNING: the machine was busy with other work: the absolute rates are depressed and noisy; ' +
        'the proxy-CPU-per-unit rows are the steadier comparison.',
    );
  }
  out.push('');
  out.push(table(results));
  out.push('');
  out.push(
    'Ratios: subject / baseline for the same metric (for MB/s, req/s and conn/s higher is better; for latency, CPU and memory lower is better). ' +
      'Proxy CPU = user+system time of the proxy process(es) during the measurement window, per unit of work done in it.',
  );
  out.push(
    'Memory is read from /proc of the proxy process(es) 1 s after the last connection opened: VmRSS (for socat summed over the ' +
      'listener and its per-connection forks, so shared pages count once per process) and PSS (shared pages split between ' +
      'processes). Growth per conn = (PSS holding − PSS before opening) / connections held.',
  );
  out.push(...notes(results));
  return out.join('\n') + '\n';
}

async function main(): Promise<number> {
  if (process.getuid?.() !== 0) {
    process.stderr.write(
      'userspace-proxy bench: needs root (it runs everything inside a network namespace of its own, created with `ip netns add`).\n' +
        'Run it as root: sudo npm run bench:userspace\n',
    );
    return 2;
  }
  const o = parseOptions();
  if (!onPath('ip')) throw new Error('`ip` (iproute2) is not installed');
  const startedAt = Date.now();
  const busyStart = await othersBusy();
  const workDir = mkdtempSync(join(tmpdir(), 'kp-bench-us-'));
  const results: ImplResult[] = [];
  let ns: BenchNamespace | undefined;
  let teardownP: Promise<void> | undefined;
  const teardown = (): Promise<void> => (teardownP ??= (async () => {
    await ns?.teardown();
    rmSync(workDir, { recursive: true, force: true });
  })());
  const onSignal = (sig: NodeJS.Signals): void => {
    process.stderr.write(`\n${sig}: stopping every child and deleting the namespace...\n`);
    void Promise.race([teardown(), idle(20_000)]).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  process.once('exit', () => ns?.teardownSync());

  try {
    ns = await BenchNamespace.create(TAG, {
      // More ephemeral ports than the default 28k: the connection-rate runs leave TIME_WAIT behind.
      // Every listening port stays below the range: ours (7001, 7080-7082) and kube-proxy's healthz
      // (10256) and metrics (10249) servers - a client's TIME_WAIT on such a port would make its
      // listen() fail with EADDRINUSE.
      'net.ipv4.ip_local_port_range': '20000 65000',
    });
    process.stderr.write(`namespace ${ns.name}; work dir ${workDir}\n`);
    const echo = ns.spawn('echo-server', process.execPath, [benchScript('userspace-echo-server.mjs'), '--port', String(ECHO_PORT), '--max-lifetime-s', '600']);
    await echo.waitLine('READY', 10_000);

    // kube-proxy last (it runs unprivileged and installs no capture rules, but if it ever did, they would
    // stay in the namespace and switch on conntrack for whatever ran after it).
    const impls: ImplName[] = ['direct', ...o.proxies.filter((p) => p !== 'kube-proxy'), ...o.proxies.filter((p) => p === 'kube-proxy')];
    for (const name of impls) results.push(await runImpl(ns, name, workDir, o));
    if (!echo.alive()) process.stderr.write(`warning: echo server exited early: ${echo.stderrTail(5)}\n`);
  } finally {
    await teardown();
  }

  const busyEnd = await othersBusy();
  process.stdout.write(reportText(results, o, Date.now() - startedAt, busyStart, busyEnd));
  const failed = results.some((r) => !r.started || r.failures.length > 0);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
