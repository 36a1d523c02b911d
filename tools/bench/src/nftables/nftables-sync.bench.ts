/**
 * Benchmark of the nftables backend's sync against the real nft (not a test). For N ClusterIP
 * services × 5 endpoints, each phase in fresh network namespaces (kpts-nfb-*, deleted by name):
 *  a. cold start: NftablesProxier over HostNft into an empty table — JS (render+plan), kernel (sum
 *     of its nft runs), total; floor: the very same transaction texts with `nft -f FILE` into a
 *     fresh namespace, and concatenated into one transaction into another (what batching buys),
 *  b. a full sync with nothing changed (forced by a Node topology-label change): time, operations,
 *  c. one endpoint of one service replaced (partial sync), 3 times: total vs the same texts applied
 *     with `nft -f` to the identical table in the floor namespace,
 *  d. restart: a second proxier over the loaded table (it reads and takes it over), and end to end
 *     `bin/kube-proxy --proxy-mode=nftables --manifests=DIR --once` into an empty table,
 *  e. with --running: the real proxy (`bin/kube-proxy --proxy-mode=nftables` against the test API
 *     server in a simulated node's namespace, running-proxy-memory.ts): spawn → rules in the kernel,
 *     settled RSS and VmHWM, and --changes one-endpoint changes through the API server,
 * and, at the sweep sizes, the cold start at several batch sizes (coldStartBatches(…, batch)): a
 * --batches entry B or B:M is B anonymous sets and M services (COLD_START_MAX_SERVICES) per transaction.
 * A size is N (× --endpoints) or NxE (e.g. 45000x1). --record writes docs/perf/data/nftables-scale.json.
 * Needs root and nft.
 *
 * Usage: node tools/bench/dist/nftables/nftables-sync.bench.js [--sizes=1000,10000,45000x1] [--endpoints=5]
 *          [--sweep-sizes=10000] [--batches=500,1000,2000,5000] [--sweep-reps=1] [--no-once] [--no-restart]
 *          [--no-one-tx] [--running] [--changes=3] [--settle-s=20] [--record]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { COLD_START_BATCH, COLD_START_MAX_SERVICES, HostNft, type NftablesProxier } from '@kube-proxy/backend-nftables/internal';
import { NftNamespace, withNamespace } from './nft-netns.js';
import { RecordingNft, kernelMs, type RecordedRun } from './recording-nft.js';
import { benchNode, loadedNftProxier } from './nft-bench-proxier.js';
import { coldStartAtBatch } from './nft-cold-start-sweep.js';
import { kubeProxyOnce, writeClusterManifests, type OnceFigure } from './nft-proxy-once.js';
import { formatReport, medianFigure, type BatchFigure, type NftBenchRow, type SyncFigure } from './nft-bench-report.js';
import { scaleCluster, sliceOf, type ScaleCluster } from '../common/scale-cluster.js';
import { measureRunningProxy } from '../common/running-proxy-memory.js';
import { REPO_ROOT } from '../common/proxy-entry.js';
import { RECORD_ID, benchRecord, type RunningFigure } from './nft-bench-record.js';

/** Endpoints per service where a size does not say (NxE). */
let ENDPOINTS_PER_SERVICE = 5;
const PARTIAL_REPS = 3;
const NS = (n: string) => `kpts-nfb-${n}`;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const numbers = (s: string) => s.split(',').filter((x) => x !== '').map(Number);
const flag = (name: string) => process.argv.includes(`--${name}`);
interface Size {
  readonly services: number;
  readonly endpoints: number;
}
const sizesOf = (s: string): Size[] =>
  s.split(',').filter((x) => x !== '').map((x) => {
    const [n, e] = x.split('x');
    return { services: Number(n), endpoints: e === undefined ? ENDPOINTS_PER_SERVICE : Number(e) };
  });
const ZERO_FIGURE: SyncFigure = { totalMs: 0, kernelMs: 0, readMs: 0, operations: 0, transactions: 0 };
const log = (line: string) => process.stderr.write(`${line}\n`);

/** One sync of `proxier`, timed; the recorder's own cost is taken out of the total. */
async function timedSync(proxier: NftablesProxier, rec: RecordingNft, expect: 'full' | 'partial'): Promise<{ figure: SyncFigure; runs: RecordedRun[] }> {
  const before = { ...proxier.stats };
  const started = process.hrtime.bigint();
  await proxier.syncProxyRules();
  const wall = Number(process.hrtime.bigint() - started) / 1e6;
  const { runs, overheadMs, readMs } = rec.take();
  const s = proxier.stats;
  if (s.syncs !== before.syncs + 1) throw new Error(`the sync failed (failures ${s.transactionFailures})`);
  const kind = s.fullSyncs > before.fullSyncs ? 'full' : 'partial';
  if (kind !== expect) throw new Error(`expected a ${expect} sync, got a ${kind} one`);
  return { figure: { totalMs: wall - overheadMs, kernelMs: kernelMs(runs), readMs, operations: s.lastOperations, transactions: runs.length }, runs };
}

/** Writes the runs as files and loads them one by one into `ns`; resolves with the summed nft time. */
async function replay(ns: NftNamespace, runs: readonly RecordedRun[], dir: string, tag: string): Promise<number> {
  let total = 0;
  for (const [i, r] of runs.entries()) {
    const file = join(dir, `${tag}-${i}.nft`);
    writeFileSync(file, r.text);
    total += await ns.load(file);
    rmSync(file);
  }
  return total;
}

async function expectServices(ns: NftNamespace, n: number, what: string): Promise<void> {
  const count = await ns.serviceIpCount();
  if (count !== n) throw new Error(`${what}: service-ips holds ${count} entries, expected ${n}`);
}

interface MeasureOptions {
  readonly once: boolean;
  readonly restart: boolean;
  readonly oneTx: boolean;
}

async function measure(size: Size, dir: string, opts: MeasureOptions): Promise<{ row: NftBenchRow; coldText: string }> {
  const n = size.services;
  const E = size.endpoints;
  const cluster: ScaleCluster = scaleCluster(n, E);
  const live = await NftNamespace.create(NS('1'));
  let floor: NftNamespace | undefined;
  try {
    floor = await NftNamespace.create(NS('2'));
    // a. cold start
    const rec = new RecordingNft(new HostNft(live.executor, 'ip'));
    const proxier = loadedNftProxier(rec, live.executor, cluster);
    const cold = await timedSync(proxier, rec, 'full');
    await expectServices(live, n, 'cold start');
    log(`  ${n}: cold start ${cold.figure.totalMs.toFixed(0)} ms in ${cold.runs.length} tx`);
    const floorBatchedMs = await replay(floor, cold.runs, dir, 'cold');
    await expectServices(floor, n, 'batched floor');
    const coldText = cold.runs.map((r) => r.text).join('');
    const floorOneTxMs = !opts.oneTx ? Number.NaN : await withNamespace(NS('3'), async (one) => {
      const file = join(dir, 'cold-one-tx.nft');
      writeFileSync(file, coldText);
      const ms = await one.load(file);
      rmSync(file);
      await expectServices(one, n, 'one-transaction floor');
      return ms;
    });
    log(`  ${n}: floors ${floorBatchedMs.toFixed(0)} ms batched, ${floorOneTxMs.toFixed(0)} ms one tx`);

    // b. full sync, nothing changed: a Node topology-label change is what forces one.
    proxier.onNodeUpdate(benchNode('zone-a'), benchNode('zone-b'));
    const full = await timedSync(proxier, rec, 'full');
    await replay(floor, full.runs, dir, 'full'); // keeps the floor table identical, if anything was written

    // c. one endpoint replaced, PARTIAL_REPS times (each moves service 0's first endpoint again).
    const partial: SyncFigure[] = [];
    const partialFloorMs: number[] = [];
    for (let rep = 1; rep <= PARTIAL_REPS; rep++) {
      proxier.onEndpointSliceUpdate(sliceOf(0, E, rep - 1), sliceOf(0, E, rep));
      const p = await timedSync(proxier, rec, 'partial');
      partial.push(p.figure);
      partialFloorMs.push(await replay(floor, p.runs, dir, `partial-${rep}`));
    }
    log(`  ${n}: partial ${partial.map((p) => `${p.totalMs.toFixed(1)} ms / ${p.operations} ops`).join(', ')}`);
    proxier.stop();

    // d. restart over the loaded table.
    let restart = { figure: ZERO_FIGURE };
    if (opts.restart) {
      const rec2 = new RecordingNft(new HostNft(live.executor, 'ip'));
      const moved = { services: cluster.services, slices: [sliceOf(0, E, PARTIAL_REPS), ...cluster.slices.slice(1)] };
      const second = loadedNftProxier(rec2, live.executor, moved);
      restart = await timedSync(second, rec2, 'full');
      second.stop();
      await expectServices(live, n, 'restart');
      log(`  ${n}: restart ${restart.figure.totalMs.toFixed(0)} ms`);
    }

    let endToEnd: OnceFigure | null = null;
    if (opts.once) {
      const manifests = mkdtempSync(join(dir, 'manifests-'));
      writeClusterManifests(manifests, n, E);
      endToEnd = await withNamespace(NS('4'), async (ns) => {
        const figure = await kubeProxyOnce(ns.executor, manifests);
        await expectServices(ns, n, 'kube-proxy --once');
        return figure;
      });
      rmSync(manifests, { recursive: true, force: true });
      log(`  ${n}: kube-proxy --once ${endToEnd.ms.toFixed(0)} ms, peak RSS ${endToEnd.maxRssMb?.toFixed(0) ?? '?'} MB`);
    }
    return {
      row: { services: n, cold: cold.figure, floorBatchedMs, floorOneTxMs, fullSync: full.figure, partial, partialFloorMs, restart: restart.figure, endToEndMs: endToEnd?.ms ?? null, endToEndRssMb: endToEnd?.maxRssMb ?? null },
      coldText,
    };
  } finally {
    await live.destroy();
    await floor?.destroy();
  }
}

/** A sweep entry: anonymous sets per transaction, and services per transaction ("B:M"; M defaults). */
function batchOf(token: number | string): { batch: number; maxServices: number } {
  const [b, m] = String(token).split(':');
  return { batch: Number(b), maxServices: m === undefined ? COLD_START_MAX_SERVICES : Number(m) };
}

async function sweepOnce(cluster: ScaleCluster, n: number, token: string, proxierColdText: string | undefined): Promise<BatchFigure> {
  const { batch, maxServices } = batchOf(token);
  return withNamespace(NS(`sweep-${batch}`), async (ns) => {
    const rec = new RecordingNft(new HostNft(ns.executor, 'ip'));
    const run = await coldStartAtBatch(cluster, rec, batch, maxServices);
    const { runs, overheadMs } = rec.take();
    await expectServices(ns, n, `sweep batch ${batch}`);
    // The sweep must plan what the proxier plans: at the default batch, the same bytes.
    if (batch === COLD_START_BATCH && maxServices === COLD_START_MAX_SERVICES && proxierColdText !== undefined && runs.map((r) => r.text).join('') !== proxierColdText) {
      throw new Error("the sweep's cold start at the default batch differs from the proxier's");
    }
    return { ...run, label: token, jsMs: run.jsMs - overheadMs, totalMs: run.totalMs - overheadMs };
  });
}

/** Every batch size `reps` times, the order rotated each pass so no size always runs first or last. */
async function sweep(n: number, batches: readonly string[], reps: number, proxierColdText: string | undefined): Promise<BatchFigure[]> {
  const cluster = scaleCluster(n, ENDPOINTS_PER_SERVICE);
  const byBatch = new Map<string, BatchFigure[]>(batches.map((b) => [b, []]));
  for (let pass = 0; pass < reps; pass++) {
    for (let i = 0; i < batches.length; i++) {
      const batch = batches[(i + pass) % batches.length]!;
      const fig = await sweepOnce(cluster, n, batch, proxierColdText);
      log(`  ${n}: pass ${pass + 1}, batch ${batch}: ${fig.totalMs.toFixed(0)} ms in ${fig.transactions} tx`);
      byBatch.get(batch)!.push(fig);
    }
  }
  return batches.map((b) => medianFigure(byBatch.get(b)!));
}

/** The real proxy at one size: spawn → rules in the kernel, settled RSS, one-endpoint changes through the API server. */
async function running(size: Size, changes: number, settleS: number): Promise<RunningFigure> {
  log(`running proxy at ${size.services} × ${size.endpoints} (load ${loadavg()[0]!.toFixed(2)})...`);
  const r = await measureRunningProxy({ mode: 'nftables', endpointChanges: changes, services: size.services, endpointsPerService: size.endpoints, settleS, log });
  const figure = { ...size, firstSyncMs: r.firstSyncMs, rssMb: r.rssKiB / 1024, peakRssMb: r.peakKiB / 1024, changeWallMs: (r.changes ?? []).map((c) => c.wallMs) };
  log(`  spawn → rules in the kernel ${fmtS(figure.firstSyncMs)}, RSS ${figure.rssMb.toFixed(0)} MB (peak ${figure.peakRssMb.toFixed(0)} MB), changes ${figure.changeWallMs.map((x) => `${x} ms`).join(', ')}`);
  return figure;
}
const fmtS = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function record(rows: ReadonlyArray<NftBenchRow & { endpoints: number }>, runs: readonly RunningFigure[], load1: readonly [number, number]): void {
  const args = process.argv.slice(2).join(' ');
  const rec = benchRecord({ command: `npm run bench:nftables -- ${args}`, measuredAt: new Date().toISOString(), load1, rows, running: runs });
  const dir = join(REPO_ROOT, 'docs', 'perf', 'data');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${RECORD_ID}.json`), `${JSON.stringify(rec, null, 2)}\n`);
  log(`recorded ${join('docs', 'perf', 'data', `${RECORD_ID}.json`)}`);
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('needs root (network namespaces and nft)');
  ENDPOINTS_PER_SERVICE = Number(arg('endpoints', '5'));
  const sizes = sizesOf(arg('sizes', '1000,10000'));
  const sweepSizes = numbers(arg('sweep-sizes', '10000'));
  const batches = arg('batches', '500,1000,2000,5000').split(',').filter((x) => x !== '');
  const sweepReps = Number(arg('sweep-reps', '1'));
  const opts: MeasureOptions = { once: !flag('no-once'), restart: !flag('no-restart'), oneTx: !flag('no-one-tx') };
  const load0 = loadavg()[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'kpts-nfb-'));
  const rows: Array<NftBenchRow & { endpoints: number }> = [];
  const runs: RunningFigure[] = [];
  const sweeps: Array<{ services: number; runs: BatchFigure[] }> = [];
  try {
    for (const size of sizes) {
      const n = size.services;
      log(`measuring ${n} services × ${size.endpoints} endpoints (load ${loadavg()[0]!.toFixed(2)})...`);
      const { row, coldText } = await measure(size, dir, opts);
      rows.push({ ...row, endpoints: size.endpoints });
      if (sweepSizes.includes(n) && size.endpoints === ENDPOINTS_PER_SERVICE) sweeps.push({ services: n, runs: await sweep(n, batches, sweepReps, coldText) });
      if (flag('running')) runs.push(await running(size, Number(arg('changes', '3')), Number(arg('settle-s', '20'))));
    }
    for (const n of sweepSizes.filter((s) => !sizes.some((z) => z.services === s))) sweeps.push({ services: n, runs: await sweep(n, batches, sweepReps, undefined) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const load1: [number, number] = [load0, loadavg()[0]!];
  const out = [
    `nftables sync benchmark — ${new Date().toISOString()}, node ${process.version}, default batch ${COLD_START_BATCH} anonymous sets / ${COLD_START_MAX_SERVICES} services, 1-min load ${load1[0].toFixed(2)} → ${load1[1].toFixed(2)}`,
    '',
    ...formatReport(rows, sweeps),
    ...formatRunning(runs),
  ];
  process.stdout.write(out.join('\n') + '\n');
  if (flag('record')) record(rows, runs, load1);
}

function formatRunning(runs: readonly RunningFigure[]): string[] {
  if (runs.length === 0) return [];
  const out = ['', 'Running proxy (bin/kube-proxy --proxy-mode=nftables, test API server, real netns)', '| services × endpoints | spawn → rules in the kernel | RSS settled | peak RSS | one-endpoint change → kernel |', '|---|---|---|---|---|'];
  for (const r of runs) out.push(`| ${r.services} × ${r.endpoints} | ${fmtS(r.firstSyncMs)} | ${r.rssMb.toFixed(0)} MB | ${r.peakRssMb.toFixed(0)} MB | ${r.changeWallMs.map((x) => `${x} ms`).join(', ') || '–'} |`);
  return out;
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
