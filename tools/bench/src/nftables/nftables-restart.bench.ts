/**
 * Benchmark of an nftables restart over the proxier's own table against a cold start in the same
 * run (issue 24: "a restart over its own table no slower than a cold start"). For each size N
 * (ClusterIP services × E endpoints), in fresh network namespaces (kpts-nfr-*, deleted by name):
 *  a. cold start: NftablesProxier over HostNft into an empty table (total, nft time); its kernel floor:
 *     the same transaction texts replayed with `nft -f` into another fresh namespace;
 *  b. restart over the identical table, `--reps` times (a new proxier each time): total, reading the
 *     table (nft's listing + our parse), nft transactions, our compute (the rest), operations;
 *  c. restart after one service's endpoint moved while no proxier ran;
 *  d. each way of listing the table, `--listing-reps` times (median): nft's wall time and output size.
 * The restart lists the table while it renders, so `read` (the listing's wall time) overlaps our own
 * work and `ours` is what is left of the total besides read and nft transactions.
 * Needs root and nft. With `--record`, writes docs/perf/data/nftables-restart.json.
 *
 * Usage: node tools/bench/dist/nftables/nftables-restart.bench.js [--services=10000] [--endpoints=5] [--reps=3] [--listing-reps=1] [--no-listings] [--record]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostNft, type NftablesProxier } from '@kube-proxy/backend-nftables/internal';
import { NftNamespace } from './nft-netns.js';
import { RecordingNft, kernelMs, type RecordedRun } from './recording-nft.js';
import { loadedNftProxier } from './nft-bench-proxier.js';
import { scaleCluster, sliceOf } from '../common/scale-cluster.js';

const NS = (n: string) => `kpts-nfr-${n}`;
const LIST_LIMIT_MS = 10 * 60 * 1000;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const log = (line: string) => process.stderr.write(`${line}\n`);
const load1 = () => Number(loadavg()[0]!.toFixed(2));
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** The listings a restart could read the table with, each naming only our table (or the whole ruleset, for comparison). */
const LISTINGS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['text, terse (what a restart reads)', ['-t', 'list', 'table', 'ip', 'kube-proxy']],
  ['text, with set contents', ['list', 'table', 'ip', 'kube-proxy']],
  ['JSON, terse (before this change)', ['-j', '-t', 'list', 'table', 'ip', 'kube-proxy']],
  ['JSON, with set contents', ['-j', 'list', 'table', 'ip', 'kube-proxy']],
  ['JSON, whole ruleset', ['-j', 'list', 'ruleset']],
  ['JSON, the service-ips map only', ['-j', 'list', 'map', 'ip', 'kube-proxy', 'service-ips']],
];

interface Timed {
  totalMs: number;
  readMs: number;
  nftMs: number;
  computeMs: number;
  operations: number;
  transactions: number;
  runs: RecordedRun[];
  load: number;
}

/** One full sync of `proxier`, split into reading the table, nft transactions and the rest (ours). */
async function timedSync(proxier: NftablesProxier, rec: RecordingNft): Promise<Timed> {
  const load = load1();
  const started = process.hrtime.bigint();
  await proxier.syncProxyRules();
  const wall = Number(process.hrtime.bigint() - started) / 1e6;
  const { runs, overheadMs, readMs } = rec.take();
  if (proxier.stats.syncs < 1 || proxier.stats.fullSyncs < 1) throw new Error(`the sync failed (failures ${proxier.stats.transactionFailures})`);
  const totalMs = wall - overheadMs;
  const nftMs = kernelMs(runs);
  return { totalMs, readMs, nftMs, computeMs: totalMs - readMs - nftMs, operations: runs.reduce((n, r) => n + r.operations, 0), transactions: runs.length, runs, load };
}

async function expectServices(ns: NftNamespace, n: number, what: string): Promise<void> {
  const count = await ns.serviceIpCount();
  if (count !== n) throw new Error(`${what}: service-ips holds ${count} entries, expected ${n}`);
}

/** A new proxier over the table in `ns` (a restart), fed `cluster`: its first sync, timed. */
async function restart(ns: NftNamespace, cluster: ReturnType<typeof scaleCluster>): Promise<Timed> {
  const rec = new RecordingNft(new HostNft(ns.executor, 'ip'));
  const proxier = loadedNftProxier(rec, ns.executor, cluster);
  try {
    return await timedSync(proxier, rec);
  } finally {
    proxier.stop();
  }
}

async function listingTimes(ns: NftNamespace, reps: number): Promise<Array<{ name: string; ms: number; mb: number; load: number }>> {
  const out = [];
  for (const [name, args] of LISTINGS) {
    const times: number[] = [];
    let bytes = 0;
    const load = load1();
    for (let rep = 0; rep < reps; rep++) {
      const started = process.hrtime.bigint();
      const r = await ns.executor.run('nft', [...args], { timeoutMs: LIST_LIMIT_MS });
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (r.exitCode !== 0) throw new Error(`nft ${args.join(' ')}: ${r.spawnError ?? r.stderr.trim()}`);
      bytes = Buffer.byteLength(r.stdout);
    }
    out.push({ name, ms: median(times), mb: bytes / 1e6, load });
    log(`  listing ${name}: ${s(median(times))}, ${(bytes / 1e6).toFixed(1)} MB`);
  }
  return out;
}

async function replayFloor(runs: readonly RecordedRun[], n: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'kpts-nfr-'));
  const floor = await NftNamespace.create(NS('floor'));
  try {
    let total = 0;
    for (const [i, r] of runs.entries()) {
      const file = join(dir, `cold-${i}.nft`);
      writeFileSync(file, r.text);
      total += await floor.load(file);
      rmSync(file);
    }
    await expectServices(floor, n, 'cold-start floor');
    return total;
  } finally {
    await floor.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface SizeResult {
  services: number;
  endpoints: number;
  cold: Timed;
  floorMs: number;
  restarts: Timed[];
  changed: Timed;
  listings: Array<{ name: string; ms: number; mb: number; load: number }>;
}

async function measure(n: number, e: number, reps: number, listingReps: number): Promise<SizeResult> {
  const cluster = scaleCluster(n, e);
  const live = await NftNamespace.create(NS('live'));
  try {
    const rec = new RecordingNft(new HostNft(live.executor, 'ip'));
    const first = loadedNftProxier(rec, live.executor, cluster);
    const cold = await timedSync(first, rec);
    first.stop();
    await expectServices(live, n, 'cold start');
    log(`  ${n}: cold start ${s(cold.totalMs)} (nft ${s(cold.nftMs)}, ${cold.operations} ops in ${cold.transactions} tx, load ${cold.load})`);
    const floorMs = await replayFloor(cold.runs, n);
    log(`  ${n}: its kernel floor ${s(floorMs)}`);
    const restarts: Timed[] = [];
    for (let rep = 0; rep < reps; rep++) {
      const r = await restart(live, cluster);
      await expectServices(live, n, 'restart');
      restarts.push(r);
      log(`  ${n}: restart ${rep + 1}: ${s(r.totalMs)} (read ${s(r.readMs)}, nft ${s(r.nftMs)}, ours ${s(r.computeMs)}; ${r.operations} ops, load ${r.load})`);
    }
    const moved = { services: cluster.services, slices: [sliceOf(0, e, 1), ...cluster.slices.slice(1)] };
    const changed = await restart(live, moved);
    await expectServices(live, n, 'restart after a change');
    log(`  ${n}: restart, one service changed: ${s(changed.totalMs)} (read ${s(changed.readMs)}, nft ${s(changed.nftMs)}; ${changed.operations} ops)`);
    return { services: n, endpoints: e, cold, floorMs, restarts, changed, listings: listingReps > 0 ? await listingTimes(live, listingReps) : [] };
  } finally {
    await live.destroy();
  }
}

function report(results: readonly SizeResult[]): string[] {
  const out = ['| services × endpoints | cold start (nft) | its kernel floor | restart, identical table: total (read ∥ / nft / ours), ops | restart / cold start | restart, 1 service changed: total, ops | load |', '|---|---|---|---|---|---|---|'];
  for (const r of results) {
    const m = (f: (t: Timed) => number) => median(r.restarts.map(f));
    const ratio = m((t) => t.totalMs) / r.cold.totalMs;
    out.push(
      `| ${r.services} × ${r.endpoints} | ${s(r.cold.totalMs)} (${s(r.cold.nftMs)}) | ${s(r.floorMs)} | ${s(m((t) => t.totalMs))} (${s(m((t) => t.readMs))} / ${s(m((t) => t.nftMs))} / ${s(m((t) => t.computeMs))}), ${m((t) => t.operations)} | ` +
        `**${ratio.toFixed(2)}×** (${ratio <= 1 ? 'holds' : 'over'}) | ${s(r.changed.totalMs)}, ${r.changed.operations} | ${r.cold.load} → ${r.changed.load} |`,
    );
  }
  for (const r of results.filter((x) => x.listings.length > 0)) {
    out.push('', `Listing the table at ${r.services} × ${r.endpoints}:`, '', '| listing | nft wall | output |', '|---|---|---|');
    for (const l of r.listings) out.push(`| ${l.name} | ${s(l.ms)} | ${l.mb.toFixed(1)} MB |`);
  }
  return out;
}

/** docs/perf/data/nftables-restart.json in the shared chart format (README, "Bench data for charts"). */
function record(results: readonly SizeResult[], loadStart: number): void {
  const pts = (f: (r: SizeResult) => number) => results.map((r) => ({ services: r.services, endpoints: r.endpoints, value: Number((f(r) / 1000).toFixed(3)) }));
  const restartMs = (r: SizeResult) => median(r.restarts.map((t) => t.totalMs));
  const series = [
    { mode: 'nftables', metric: 'restart-s', source: 'ours', label: 'kube-proxy-ts restart over its own table (read, compare, write the difference), median', points: pts(restartMs) },
    { mode: 'nftables', metric: 'restart-s', source: 'kernel', label: 'nft time within that restart (listing the table + transactions)', points: pts((r) => median(r.restarts.map((t) => t.readMs + t.nftMs))) },
    { mode: 'nftables', metric: 'restart-s', source: 'bound', label: 'issue 24 bound: restart ≤ cold start (same run)', points: pts((r) => r.cold.totalMs) },
    { mode: 'nftables', metric: 'cold-start-s', source: 'ours', label: 'kube-proxy-ts cold start (sync → rules in the kernel)', points: pts((r) => r.cold.totalMs) },
    { mode: 'nftables', metric: 'cold-start-s', source: 'kernel', label: 'nft -f of the same transactions into a fresh namespace', points: pts((r) => r.floorMs) },
    { mode: 'nftables', metric: 'restart-s', source: 'upstream', label: 'upstream nftables restart resync, 10k × 2 (kubernetes PR #130119)', points: [{ services: 10000, endpoints: 2, value: 194 }] },
  ];
  const argv = process.argv.slice(2).join(' ');
  const doc = { id: 'nftables-restart', command: `npm run bench:nftables-restart -- ${argv}`.trim(), measuredAt: new Date().toISOString(), load1: [loadStart, load1()], series };
  mkdirSync('docs/perf/data', { recursive: true });
  writeFileSync('docs/perf/data/nftables-restart.json', JSON.stringify(doc, null, 2) + '\n');
  log('wrote docs/perf/data/nftables-restart.json');
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('needs root (network namespaces and nft)');
  const sizes = arg('services', '10000').split(',').filter((x) => x !== '').map(Number);
  const endpoints = Number(arg('endpoints', '5'));
  const reps = Number(arg('reps', '3'));
  const loadStart = load1();
  const results: SizeResult[] = [];
  for (const n of sizes) {
    log(`measuring ${n} services × ${endpoints} endpoints (load ${load1()})...`);
    results.push(await measure(n, endpoints, reps, process.argv.includes('--no-listings') ? 0 : Number(arg('listing-reps', '1'))));
  }
  process.stdout.write([`nftables restart benchmark — ${new Date().toISOString()}, node ${process.version}, load ${loadStart} → ${load1()}`, '', ...report(results)].join('\n') + '\n');
  if (process.argv.includes('--record')) record(results, loadStart);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
