/**
 * The iptables mode at scale, in one run per size (issue 24 items 1–4; a measurement, not a test):
 *  - the dry run (`bin/kube-proxy --dry-run --once --proxy-mode=iptables --manifests=FILE`): wall time and
 *    peak RSS (median of --runs), against `iptables-legacy-restore` of its output into an empty namespace;
 *  - the running proxy against the test API server in a simulated node (iptables-legacy): spawn → IPv4's
 *    first full sync in the kernel, against iptables-legacy-restore of the same tables, and its RSS
 *    --settle-s later (VmRSS, VmHWM);
 *  - in-process (sync-measure.ts): one endpoint moved, our own compute (trackers + partial render), and
 *    the partial sync applied by iptables-legacy-restore and iptables-nft-restore, and the full payload's
 *    apply by both (the kernel tool's cold floor for each variant).
 * With --record it writes docs/perf/data/iptables-scale.json (the charts' input); --merge keeps the file's
 * points this run does not measure.
 * Needs root, iproute2, iptables-legacy, iptables-nft and GNU time; runs only in namespaces it creates.
 *
 * Usage: node tools/bench/dist/iptables/iptables-scale.bench.js [--sizes=1000x5,10000x5,30000x5,45000x1]
 *          [--runs=3] [--settle-s=20] [--nft-max=45000] [--phases=dry-run,running,sync] [--record [--merge]]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastSyncTables, measureDryRun } from '../memory/dry-run-memory.js';
import { legacyRestoreMs } from '../common/legacy-restore-yardstick.js';
import { measureRunningProxy } from '../common/running-proxy-memory.js';
import { scaleClusterList } from '../common/scale-cluster.js';
import { measureSync } from './sync-measure.js';
import { ScaleRecord } from './scale-record.js';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const log = (line: string) => console.log(line);
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const MB = (kib: number) => kib / 1024;
const load1 = () => ScaleRecord.load1();

interface Size {
  readonly services: number;
  readonly endpoints: number;
}

function parseSizes(text: string): Size[] {
  return text.split(',').map((x) => {
    const [services, endpoints] = x.split('x').map(Number);
    return { services: services!, endpoints: endpoints ?? 5 };
  });
}

async function dryRun(size: Size, runs: number, out: string, rec: ScaleRecord): Promise<void> {
  const manifests = join(out, `cluster-${size.services}x${size.endpoints}.json`);
  writeFileSync(manifests, JSON.stringify(scaleClusterList(size.services, size.endpoints)));
  const load = load1();
  const r = await measureDryRun(manifests, runs);
  const restoreMs = await legacyRestoreMs(lastSyncTables(r.output));
  rmSync(manifests, { force: true });
  log(`  dry run: wall ${r.runs.map((x) => s(x.wallMs)).join(', ')} (median ${s(r.medianWallMs)}); legacy restore of its output ${s(restoreMs)} = ${(r.medianWallMs / restoreMs).toFixed(2)}×; peak RSS ${r.runs.map((x) => MB(x.peakRssKiB).toFixed(0)).join(', ')} MB (load ${load} → ${load1()})`);
  for (const mode of ['iptables-legacy', 'iptables-nft'] as const) {
    // The dry run writes no rules: its output is the same for both variants.
    rec.point(mode, 'dry-run-s', 'ours', size, r.medianWallMs / 1000);
    rec.point(mode, 'dry-run-peak-rss-mb', 'ours', size, MB(r.medianPeakKiB));
  }
  rec.point('iptables-legacy', 'dry-run-s', 'kernel', size, restoreMs / 1000);
}

async function running(size: Size, settleS: number, rec: ScaleRecord): Promise<void> {
  const load = load1();
  const r = await measureRunningProxy({ services: size.services, endpointsPerService: size.endpoints, settleS, log: (l) => log(`  ${l.trim()}`) });
  // iptables mode always measures the legacy restore of what the proxy left (only nftables has none).
  const kernelApplyMs = r.kernelApplyMs ?? Number.NaN;
  log(`  running proxy (iptables-legacy): cold start ${s(r.firstSyncMs)} / kernel apply ${s(kernelApplyMs)} = ${(r.firstSyncMs / kernelApplyMs).toFixed(2)}×; RSS ${MB(r.rssKiB).toFixed(0)} MB, VmHWM ${MB(r.peakKiB).toFixed(0)} MB (load ${load} → ${load1()})`);
  rec.point('iptables-legacy', 'cold-start-s', 'ours', size, r.firstSyncMs / 1000);
  rec.point('iptables-legacy', 'cold-start-s', 'kernel', size, kernelApplyMs / 1000);
  rec.point('iptables-legacy', 'rss-mb', 'ours', size, MB(r.rssKiB));
  rec.point('iptables-legacy', 'peak-rss-mb', 'ours', size, MB(r.peakKiB));
}

async function sync(size: Size, nftMax: number, rec: ScaleRecord): Promise<void> {
  const load = load1();
  const r = await measureSync(size.services, size.endpoints, ['legacy', 'nft'], nftMax);
  const leg = r.apply.legacy;
  const nft = r.apply.nft;
  log(`  one-endpoint change: compute ${r.changeComputeMs.toFixed(1)} ms wall, ${r.changeCpuMs.toFixed(1)} ms CPU (first: ${r.partialRenderMs.toFixed(1)} ms, ${r.partialBytes} B); partial apply legacy ${leg?.partial ?? '–'} ms, nft ${nft?.partial ?? '–'} ms; full apply legacy ${leg?.full ?? '–'} ms, nft ${nft?.full ?? '–'} ms (load ${load} → ${load1()})`);
  for (const [mode, a] of [['iptables-legacy', leg], ['iptables-nft', nft]] as const) {
    // CPU time: on a busy machine the wall time is mostly waiting for a core (both are logged above).
    rec.point(mode, 'change-compute-ms', 'ours', size, r.changeCpuMs);
    if (a?.partial != null) rec.point(mode, 'incremental-sync-s', 'ours', size, (r.partialRenderMs + a.partial) / 1000);
    if (a?.partial != null) rec.point(mode, 'incremental-sync-s', 'kernel', size, a.partial / 1000);
  }
  if (nft?.full != null) rec.point('iptables-nft', 'cold-start-s', 'kernel', size, nft.full / 1000);
}

async function main(): Promise<void> {
  const sizes = parseSizes(arg('sizes', '1000x5,10000x5'));
  const runs = Number(arg('runs', '3'));
  const settleS = Number(arg('settle-s', '20'));
  const nftMax = Number(arg('nft-max', '45000'));
  const phases = new Set(arg('phases', 'dry-run,running,sync').split(','));
  const command = `npm run bench:iptables-scale -- ${process.argv.slice(2).join(' ')}`.trim();
  const rec = new ScaleRecord('iptables-scale', command);
  const out = mkdtempSync(join(tmpdir(), 'kp-iptscale-'));
  try {
    for (const size of sizes) {
      log(`${size.services} Services × ${size.endpoints} endpoints, node ${process.version}`);
      if (phases.has('dry-run')) await dryRun(size, size.services > 10_000 ? 1 : runs, out, rec);
      if (phases.has('running')) await running(size, settleS, rec);
      if (phases.has('sync')) await sync(size, nftMax, rec);
      // After each size: a later size that fails or times out keeps what was measured.
      if (process.argv.includes('--record')) log(`recorded ${rec.write(process.argv.includes('--merge'))}`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
