import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandExecutor } from '@kube-proxy/core';
import { BENCH_NODE, benchNode } from './nft-bench-proxier.js';
import { KUBE_PROXY_BIN } from '../common/proxy-entry.js';
import { scaleClusterList } from '../common/scale-cluster.js';


const ONCE_LIMIT_MS = 10 * 60 * 1000;

/** Writes the cluster (and this node) as one `kind: List` manifest into `dir`. */
export function writeClusterManifests(dir: string, services: number, endpointsPerService: number): void {
  const list = scaleClusterList(services, endpointsPerService);
  list.items.unshift(benchNode('zone-a'));
  writeFileSync(join(dir, 'cluster.json'), JSON.stringify(list));
}

/** GNU time, when installed: its %M is the peak RSS of the proxy (the largest process it waited for). */
const GNU_TIME = '/usr/bin/time';

export interface OnceFigure {
  /** Spawn → exit: start → all rules in the kernel. */
  readonly ms: number;
  /** Peak RSS in MB (GNU time's maxrss); null without /usr/bin/time. */
  readonly maxRssMb: number | null;
}

/**
 * `bin/kube-proxy --proxy-mode=nftables --manifests=DIR --once` through `executor` (one that runs
 * inside the bench's namespace): wall time from spawn to exit, which is start → all rules in the
 * kernel, and the peak RSS (issue 23: "RSS at 10k").
 */
export async function kubeProxyOnce(executor: CommandExecutor, manifestsDir: string): Promise<OnceFigure> {
  const args = ['--proxy-mode=nftables', `--manifests=${manifestsDir}`, '--once', `--hostname-override=${BENCH_NODE.name}`, `--cluster-cidr=${BENCH_NODE.clusterCIDR}`];
  const rssFile = join(manifestsDir, 'maxrss.txt');
  const timed = existsSync(GNU_TIME);
  const [command, argv] = timed ? [GNU_TIME, ['-f', '%M', '-o', rssFile, KUBE_PROXY_BIN, ...args]] : [KUBE_PROXY_BIN, args];
  const started = process.hrtime.bigint();
  const r = await executor.run(command, argv, { timeoutMs: ONCE_LIMIT_MS, discardStdout: true });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.exitCode !== 0) throw new Error(`kube-proxy --once exited ${String(r.exitCode)}: ${r.spawnError ?? r.stderr.slice(-2000)}`);
  const kb = timed ? Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop()) : NaN;
  return { ms, maxRssMb: Number.isFinite(kb) ? kb / 1024 : null };
}
