/**
 * Memory profile at scale (issue 12, item 1; a measurement, not a test). For N ClusterIP Services × E
 * endpoints (tools/bench/src/common/scale-cluster.ts) it reports
 *  - dry-run: peak RSS of `bin/kube-proxy --dry-run --once --proxy-mode=iptables --manifests=FILE`
 *    (median of --runs), against the issue's bounds (200 MB at 10k, 450 MB at 30k);
 *  - running: VmRSS of a real proxy in a network namespace, against the test API server, with real
 *    rules (--proxy-mode=iptables, the default: iptables-legacy; or nftables), --settle-s after its
 *    first full sync, and its VmHWM; with --changes=N, N one-endpoint changes through the API server
 *    (update → the new endpoint in the kernel, and the proxy's own sync time);
 *  - the cold-start ratios: the running proxy's spawn → first full sync applied against
 *    iptables-legacy-restore of the same tables into an empty namespace (bound 1.5×), and the whole
 *    dry-run process against iptables-legacy-restore of its output (bound 0.5×);
 *  - with --snapshots: a heap snapshot of each process, broken down per component through the
 *    dominator tree (tools/bench/src/memory/heap-breakdown.ts): informer caches, core's trackers and maps,
 *    the iptables backend's caches and buffers, the dry-run table model, strings.
 * Needs root, iproute2, iptables-legacy and GNU time (/usr/bin/time); runs only inside namespaces it
 * creates. Build first (`npx nx run-many -t build`): it runs the built proxy.
 *
 * Usage: node tools/bench/dist/memory/memory-profile.js [--services=10000] [--endpoints=5] [--runs=3]
 *          [--phases=dry-run,running] [--proxy-mode=iptables|nftables] [--changes=0] [--settle-s=20]
 *          [--snapshots] [--out=DIR]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { breakdownOfFile, formatBreakdown } from './heap-breakdown.js';
import { lastSyncTables, measureDryRun } from './dry-run-memory.js';
import { legacyRestoreMs } from '../common/legacy-restore-yardstick.js';
import { measureRunningProxy } from '../common/running-proxy-memory.js';
import type { RunningProxyMode } from '../common/running-proxy-probes.js';
import { scaleClusterList } from '../common/scale-cluster.js';

/** The issue's RSS bounds: 200 MB at 10k services, 450 MB at 30k (in between: the 30k bound). */
const boundMB = (services: number) => (services <= 10_000 ? 200 : 450);
/** The issue's cold-start bounds: start → first sync ≤ 1.5× the kernel's apply; the whole dry run ≤ 0.5× legacy restore of its output. */
const COLD_START_BOUND = 1.5;
const DRY_RUN_BOUND = 0.5;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const flag = (name: string) => process.argv.includes(`--${name}`);
const mb = (kib: number) => `${(kib / 1024).toFixed(0)} MB`;
let BOUND_MB = 200;
const verdict = (kib: number) => (kib / 1024 <= BOUND_MB ? `≤ ${BOUND_MB} MB: holds` : `> ${BOUND_MB} MB: over`);
const ratio = (x: number, bound: number) => `${x.toFixed(2)}× (${x <= bound ? `≤ ${bound}×: holds` : `> ${bound}×: over`})`;
const log = (line: string) => console.log(line);

async function main(): Promise<void> {
  const services = Number(arg('services', '10000'));
  const endpoints = Number(arg('endpoints', '5'));
  const runs = Number(arg('runs', '3'));
  const settleS = Number(arg('settle-s', '20'));
  const phases = new Set(arg('phases', 'dry-run,running').split(','));
  const snapshots = flag('snapshots');
  BOUND_MB = boundMB(services);
  const keep = process.argv.some((a) => a.startsWith('--out='));
  const out = keep ? arg('out', '') : mkdtempSync(join(tmpdir(), 'kp-memory-'));
  mkdirSync(out, { recursive: true });
  log(`memory profile: ${services} Services × ${endpoints} endpoints, node ${process.version}, output in ${out}`);

  try {
    if (phases.has('dry-run')) {
      const manifests = join(out, `cluster-${services}x${endpoints}.json`);
      writeFileSync(manifests, JSON.stringify(scaleClusterList(services, endpoints)));
      const r = await measureDryRun(manifests, runs, snapshots ? join(out, 'dry-run.heapsnapshot') : undefined);
      log(`\ndry-run --once (manifests List): peak RSS ${r.runs.map((x) => mb(x.peakRssKiB)).join(', ')}; median ${mb(r.medianPeakKiB)} (${verdict(r.medianPeakKiB)})`);
      log(`  wall ${r.runs.map((x) => `${(x.wallMs / 1000).toFixed(2)} s`).join(', ')}; output ${(r.runs[0]!.stdoutBytes / 1048576).toFixed(1)} MB`);
      if (process.getuid?.() === 0) {
        const restoreMs = await legacyRestoreMs(lastSyncTables(r.output));
        log(`  whole dry-run process / iptables-legacy-restore of its output: ${(r.medianWallMs / 1000).toFixed(2)} s / ${(restoreMs / 1000).toFixed(2)} s = ${ratio(r.medianWallMs / restoreMs, DRY_RUN_BOUND)}`);
      } else log('  (not root: no iptables-legacy-restore yardstick for the dry-run ratio)');
      if (r.snapshot) log(`  heap at output (${r.snapshot}):\n${formatBreakdown(breakdownOfFile(r.snapshot))}`);
    }
    if (phases.has('running')) {
      const mode = arg('proxy-mode', 'iptables') as RunningProxyMode;
      const changes = Number(arg('changes', '0'));
      log(`\nrunning proxy (test API server, ${mode === 'iptables' ? 'iptables-legacy' : mode}, real netns; load ${loadavg()[0]!.toFixed(2)}):`);
      const r = await measureRunningProxy({ mode, endpointChanges: changes, services, endpointsPerService: endpoints, settleS, proxyLogFile: join(out, 'running-proxy.log'), ...(snapshots ? { snapshotDir: join(out, 'running') } : {}), log });
      log(`  RSS ${settleS} s after the first sync: ${mb(r.rssKiB)} (${verdict(r.rssKiB)}); VmHWM ${mb(r.peakKiB)}; ${mode === 'iptables' ? 'nat table lines' : 'cluster-ips elements'} ${r.natLines}`);
      if (r.kernelApplyMs !== undefined) {
        log(`  cold start (spawn → first full sync applied) / iptables-legacy-restore of the same tables: ${(r.firstSyncMs / 1000).toFixed(2)} s / ${(r.kernelApplyMs / 1000).toFixed(2)} s = ${ratio(r.firstSyncMs / r.kernelApplyMs, COLD_START_BOUND)}`);
      } else log(`  cold start (spawn → first full sync in the kernel): ${(r.firstSyncMs / 1000).toFixed(2)} s`);
      if (r.rssAfterChangesKiB !== undefined) log(`  RSS after the changes: ${mb(r.rssAfterChangesKiB)}`);
      log(`  load at the end: ${loadavg()[0]!.toFixed(2)}`);
      if (r.snapshot) log(`  heap ${settleS} s after the first sync (${r.snapshot}):\n${formatBreakdown(breakdownOfFile(r.snapshot))}`);
    }
  } finally {
    if (!keep) rmSync(out, { recursive: true, force: true });
  }
}

await main();
