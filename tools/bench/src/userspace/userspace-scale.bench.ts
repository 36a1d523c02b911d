/**
 * Userspace mode at scale (issue 24): `bin/kube-proxy --proxy-mode=userspace` running for real in a
 * network namespace against the test API server, N ClusterIP Services × E endpoints, one size after
 * another (see userspace-scale-run.ts for what is measured and how).
 *
 * Usage: node tools/bench/dist/userspace/userspace-scale.bench.js [--services=1000,10000,30000]
 *   [--endpoints=5] [--settle=20] [--changes=3] [--snapshots=DIR] [--record]
 * Needs root (namespaces, capture rules). A size needs a proxy socket per Service: one that does not
 * fit under this process's RLIMIT_NOFILE (less the proxy's 256 reserved descriptors) is reported as
 * skipped with the limit. `--record` writes docs/perf/data/userspace-scale.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAverage1, writePerfData } from '../charts/perf-data.js';
import { REPO_ROOT } from '../common/proxy-entry.js';
import { changeMedians, userspaceScaleData } from './userspace-scale-figures.js';
import { measureUserspaceScale, type UserspaceScaleResult } from './userspace-scale-run.js';

/** The proxy's own reserve (RESERVED_FDS) plus the API watches, health servers and the bench's margin. */
const FD_HEADROOM = 256 + 200;

function arg(name: string, fallback: string): string {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? fallback : a.slice(name.length + 3);
}

function softNofile(): number {
  const m = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m && m[1] !== 'unlimited' ? Number(m[1]) : Number.POSITIVE_INFINITY;
}

const mb = (kib: number) => `${(kib / 1024).toFixed(0)} MB`;

function report(r: UserspaceScaleResult): string {
  const ch = changeMedians(r.changeSyncs);
  return [
    `| ${r.services.toLocaleString('en')} × ${r.endpointsPerService}`,
    `${(r.coldStartMs / 1000).toFixed(2)} s`,
    `${(r.kernelApplyMs / 1000).toFixed(3)} s`,
    `${(r.coldStartMs / r.kernelApplyMs).toFixed(1)}×`,
    `${r.listeners}`,
    mb(r.rssKiB),
    mb(r.peakKiB),
    `${ch.wallMs} ms`,
    `${ch.cpuMs} ms |`,
  ].join(' | ');
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.log('SKIPPED: the userspace scale bench needs root (network namespaces, capture rules)');
    return;
  }
  const sizes = arg('services', '1000,10000,30000').split(',').map(Number);
  const endpoints = Number(arg('endpoints', '5'));
  const settleS = Number(arg('settle', '20'));
  const changes = Number(arg('changes', '3'));
  const snapshots = arg('snapshots', '');
  const load0 = loadAverage1();
  const measuredAt = new Date().toISOString();
  const results: UserspaceScaleResult[] = [];
  const skipped: string[] = [];
  const failed: string[] = [];
  for (const services of sizes) {
    const limit = softNofile();
    if (services + FD_HEADROOM > limit) {
      skipped.push(`${services} services: a proxy socket each needs ${services + FD_HEADROOM} descriptors, RLIMIT_NOFILE is ${limit}`);
      console.log(`  skipping ${services} services: RLIMIT_NOFILE ${limit} < ${services} sockets + ${FD_HEADROOM}`);
      continue;
    }
    console.log(`${services} services × ${endpoints} endpoints (load ${loadAverage1()})`);
    const log = (l: string) => console.log(l);
    try {
      results.push(await measureUserspaceScale({ services, endpointsPerService: endpoints, settleS, changes, log, ...(snapshots ? { snapshotDir: join(snapshots, String(services)) } : {}) }));
    } catch (err) {
      // One size failing (another bench holding the xtables lock, a timeout) must not lose the others.
      failed.push(`${services} services: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
      console.error(`  ${services} services failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
  }
  const load1 = loadAverage1();
  console.log(`\nload ${load0} → ${load1}`);
  console.log('| services | cold start | kernel floor | ratio | listeners | RSS | peak | change wall | change CPU |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of results) console.log(report(r));
  for (const s of skipped) console.log(`skipped: ${s}`);
  for (const f of failed) console.log(`failed: ${f}`);
  if (process.argv.includes('--record') && results.length > 0) {
    const command = `npm run bench:userspace-scale -- ${process.argv.slice(2).join(' ')}`.trim();
    const path = writePerfData(join(REPO_ROOT, 'docs/perf/data'), userspaceScaleData(results, { command, measuredAt, load1: [load0, load1] }));
    console.log(`recorded ${path}`);
  }
  if (failed.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
