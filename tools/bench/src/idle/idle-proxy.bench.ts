/**
 * Idle proxy (issue 20, defect 3; a measurement, not a test): what a running proxy costs once its
 * first sync is done and nothing changes. For each mode (iptables with iptables-legacy, nftables)
 * and each source (one --manifests `List` file of N ClusterIP Services × E endpoints, or the test API
 * server holding the same objects) it runs the real `bin/kube-proxy` in a fresh simulated node's
 * namespace (tools/bench/src/idle/idle-proxy-run.ts) and prints CPU % of one core (the proxy's own, and
 * that of the tools it ran and reaped: iptables-restore, nft) and VmRSS (min, median, max) over the
 * idle window, with the syncs it logged meanwhile (periodic resyncs). The settle time before the
 * window lets V8's memory reducer finish: some 15 s after the first sync's allocations stop it runs
 * a few full GCs (about 1 s of CPU at 10,000 Services, RSS down by 100+ MB), a one-off, not idle work.
 * Needs root, iproute2, iptables-legacy and nft; runs only inside namespaces it creates. Build first
 * (`npx nx run-many -t build`): it runs the built proxy.
 *
 * Usage: npm run bench:idle -- [--services=10000] [--endpoints=5] [--modes=iptables,nftables]
 *          [--sources=manifests,api] [--settle-s=30] [--idle-s=60] [--proxy-main=PATH]
 *   --proxy-main runs another build's apps/proxy/dist/main.js (e.g. a copy built before a change)
 *   instead of bin/kube-proxy, with the same runtime settings.
 *   (or node tools/bench/dist/idle/idle-proxy.bench.js with the same flags)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureIdleProxy, type IdleMode, type IdleRun, type IdleSource } from './idle-proxy-run.js';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const log = (line: string) => console.log(line);
const mb = (kib: number) => `${(kib / 1024).toFixed(0)} MB`;
const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');

function table(runs: readonly IdleRun[]): string {
  const rows = runs.map((r) => [
    r.mode,
    r.source,
    `${(r.firstSyncMs / 1000).toFixed(1)} s`,
    `${r.cpuPercent.toFixed(2)} %`,
    `${r.childCpuPercent.toFixed(2)} %`,
    `${mb(r.rssMinKiB)} / ${mb(r.rssMedianKiB)} / ${mb(r.rssMaxKiB)}`,
    String(r.syncsWhileIdle),
  ]);
  const head = ['mode', 'source', 'first sync', 'idle CPU (1 core)', 'tools it ran', 'RSS min / median / max', 'syncs while idle'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const services = Number(arg('services', '10000'));
  const endpoints = Number(arg('endpoints', '5'));
  const settleS = Number(arg('settle-s', '30'));
  const idleS = Number(arg('idle-s', '60'));
  const modes = arg('modes', 'iptables,nftables').split(',') as IdleMode[];
  const sources = arg('sources', 'manifests,api').split(',') as IdleSource[];
  const proxyMain = arg('proxy-main', '') || undefined;
  const workDir = mkdtempSync(join(tmpdir(), 'kp-idle-'));
  log(`idle proxy: ${services} ClusterIP Services × ${endpoints} endpoints, ${settleS} s settle + ${idleS} s idle, node ${process.version}`);
  if (proxyMain) log(`proxy: ${proxyMain}`);
  log(`load average at start: ${load()}`);
  const runs: IdleRun[] = [];
  try {
    for (const mode of modes) {
      for (const source of sources) {
        runs.push(await measureIdleProxy({ mode, source, services, endpointsPerService: endpoints, settleS, idleS, workDir, log, ...(proxyMain ? { proxyMain } : {}) }));
      }
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  log('');
  log(table(runs));
  log(`load average at end: ${load()}`);
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
