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
 * and, at the sweep sizes, the cold start at several batch sizes (coldStartBatches(…, batch)).
 * Needs root and nft.
 *
 * Usage: node tools/bench/dist/nftables/nftables-sync.bench.js [--sizes=1000,10000] [--sweep-sizes=10000]
 *                                                     [--batches=500,1000,2000,5000] [--sweep-reps=1] [--no-once]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COLD_START_BATCH, HostNft, type NftablesProxier } from '@kube-proxy/backend-nftables/internal';
import { NftNamespace, withNamespace } from './nft-netns.js';
import { RecordingNft, kernelMs, type RecordedRun } from './recording-nft.js';
import { benchNode, loadedNftProxier } from './nft-bench-proxier.js';
import { coldStartAtBatch } from './nft-cold-start-sweep.js';
import { kubeProxyOnce, writeClusterManifests, type OnceFigure } from './nft-proxy-once.js';
import { formatReport, medianFigure, type BatchFigure, type NftBenchRow, type SyncFigure } from './nft-bench-report.js';
import { scaleCluster, sliceOf, type ScaleCluster } from '../common/scale-cluster.js';

const ENDPOINTS_PER_SERVICE = 5;
const PARTIAL_REPS = 3;
const NS = (n: string) => `kpts-nfb-${n}`;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const numbers = (s: string) => s.split(',').filter((x) => x !== '').map(Number);
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

async function measure(n: number, dir: string, once: boolean): Promise<{ row: NftBenchRow; coldText: string }> {
  const cluster: ScaleCluster = scaleCluster(n, ENDPOINTS_PER_SERVICE);
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
    const floorOneTxMs = await withNamespace(NS('3'), async (one) => {
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
      proxier.onEndpointSliceUpdate(sliceOf(0, ENDPOINTS_PER_SERVICE, rep - 1), sliceOf(0, ENDPOINTS_PER_SERVICE, rep));
      const p = await timedSync(proxier, rec, 'partial');
      partial.push(p.figure);
      partialFloorMs.push(await replay(floor, p.runs, dir, `partial-${rep}`));
    }
    log(`  ${n}: partial ${partial.map((p) => `${p.totalMs.toFixed(1)} ms / ${p.operations} ops`).join(', ')}`);
    proxier.stop();

    // d. restart over the loaded table.
    const rec2 = new RecordingNft(new HostNft(live.executor, 'ip'));
    const moved = { services: cluster.services, slices: [sliceOf(0, ENDPOINTS_PER_SERVICE, PARTIAL_REPS), ...cluster.slices.slice(1)] };
    const second = loadedNftProxier(rec2, live.executor, moved);
    const restart = await timedSync(second, rec2, 'full');
    second.stop();
    await expectServices(live, n, 'restart');
    log(`  ${n}: restart ${restart.figure.totalMs.toFixed(0)} ms`);

    let endToEnd: OnceFigure | null = null;
    if (once) {
      const manifests = mkdtempSync(join(dir, 'manifests-'));
      writeClusterManifests(manifests, n, ENDPOINTS_PER_SERVICE);
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

async function sweepOnce(cluster: ScaleCluster, n: number, batch: number, proxierColdText: string | undefined): Promise<BatchFigure> {
  return withNamespace(NS(`sweep-${batch}`), async (ns) => {
    const rec = new RecordingNft(new HostNft(ns.executor, 'ip'));
    const run = await coldStartAtBatch(cluster, rec, batch);
    const { runs, overheadMs } = rec.take();
    await expectServices(ns, n, `sweep batch ${batch}`);
    // The sweep must plan what the proxier plans: at the default batch, the same bytes.
    if (batch === COLD_START_BATCH && proxierColdText !== undefined && runs.map((r) => r.text).join('') !== proxierColdText) {
      throw new Error("the sweep's cold start at the default batch differs from the proxier's");
    }
    return { ...run, jsMs: run.jsMs - overheadMs, totalMs: run.totalMs - overheadMs };
  });
}

/** Every batch size `reps` times, the order rotated each pass so no size always runs first or last. */
async function sweep(n: number, batches: readonly number[], reps: number, proxierColdText: string | undefined): Promise<BatchFigure[]> {
  const cluster = scaleCluster(n, ENDPOINTS_PER_SERVICE);
  const byBatch = new Map<number, BatchFigure[]>(batches.map((b) => [b, []]));
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

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('needs root (network namespaces and nft)');
  const sizes = numbers(arg('sizes', '1000,10000'));
  const sweepSizes = numbers(arg('sweep-sizes', '10000'));
  const batches = numbers(arg('batches', '500,1000,2000,5000'));
  const sweepReps = Number(arg('sweep-reps', '1'));
  const once = !process.argv.includes('--no-once');
  const dir = mkdtempSync(join(tmpdir(), 'kpts-nfb-'));
  const rows: NftBenchRow[] = [];
  const sweeps: Array<{ services: number; runs: BatchFigure[] }> = [];
  try {
    for (const n of sizes) {
      log(`measuring ${n} services × ${ENDPOINTS_PER_SERVICE} endpoints...`);
      const { row, coldText } = await measure(n, dir, once);
      rows.push(row);
      if (sweepSizes.includes(n)) sweeps.push({ services: n, runs: await sweep(n, batches, sweepReps, coldText) });
    }
    for (const n of sweepSizes.filter((s) => !sizes.includes(s))) sweeps.push({ services: n, runs: await sweep(n, batches, sweepReps, undefined) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const out = [`nftables sync benchmark — ${new Date().toISOString()}, node ${process.version}, ${ENDPOINTS_PER_SERVICE} endpoints/service, default batch ${COLD_START_BATCH}`, '', ...formatReport(rows, sweeps)];
  process.stdout.write(out.join('\n') + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
