/**
 * Memory profile at scale (issue 12, item 1; a measurement, not a test). For N ClusterIP Services × E
 * endpoints (tools/src/bench/scale-cluster.ts) it reports
 *  - dry-run: peak RSS of `bin/kube-proxy --dry-run --once --proxy-mode=iptables --manifests=FILE`
 *    (median of --runs), against the issue's 200 MB bound at 10k;
 *  - running: VmRSS of a real proxy in a network namespace, against the test API server, with real
 *    rules (iptables-legacy), --settle-s after its first full sync, and its VmHWM;
 *  - with --snapshots: a heap snapshot of each process, broken down per component through the
 *    dominator tree (tools/src/bench/heap-breakdown.ts): informer caches, core's trackers and maps,
 *    the iptables backend's caches and buffers, the dry-run table model, strings.
 * Needs root, iproute2, iptables-legacy and GNU time (/usr/bin/time); runs only inside namespaces it
 * creates. Build first (`npx nx run-many -t build`): it runs the built proxy.
 *
 * Usage: node tools/dist/bench/memory-profile.js [--services=10000] [--endpoints=5] [--runs=3]
 *          [--phases=dry-run,running] [--settle-s=20] [--snapshots] [--out=DIR]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { breakdownOfFile, formatBreakdown } from './heap-breakdown.js';
import { measureDryRun } from './dry-run-memory.js';
import { measureRunningProxy } from './running-proxy-memory.js';
import { scaleClusterList } from './scale-cluster.js';

const BOUND_MB = 200;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const flag = (name: string) => process.argv.includes(`--${name}`);
const mb = (kib: number) => `${(kib / 1024).toFixed(0)} MB`;
const verdict = (kib: number) => (kib / 1024 <= BOUND_MB ? `≤ ${BOUND_MB} MB: holds` : `> ${BOUND_MB} MB: over`);
const log = (line: string) => console.log(line);

async function main(): Promise<void> {
  const services = Number(arg('services', '10000'));
  const endpoints = Number(arg('endpoints', '5'));
  const runs = Number(arg('runs', '3'));
  const settleS = Number(arg('settle-s', '20'));
  const phases = new Set(arg('phases', 'dry-run,running').split(','));
  const snapshots = flag('snapshots');
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
      if (r.snapshot) log(`  heap at output (${r.snapshot}):\n${formatBreakdown(breakdownOfFile(r.snapshot))}`);
    }
    if (phases.has('running')) {
      log('\nrunning proxy (test API server, iptables-legacy, real netns):');
      const r = await measureRunningProxy({ services, endpointsPerService: endpoints, settleS, ...(snapshots ? { snapshotDir: join(out, 'running') } : {}), log });
      log(`  RSS ${settleS} s after the first sync: ${mb(r.rssKiB)} (${verdict(r.rssKiB)}); VmHWM ${mb(r.peakKiB)}; nat table ${r.natLines} lines`);
      if (r.snapshot) log(`  heap ${settleS} s after the first sync (${r.snapshot}):\n${formatBreakdown(breakdownOfFile(r.snapshot))}`);
    }
  } finally {
    if (!keep) rmSync(out, { recursive: true, force: true });
  }
}

await main();
