/**
 * The whole `bin/kube-proxy --proxy-mode=ipvs --dry-run --manifests=FILE` process at N × E (the
 * scale cluster written as a manifests List into a temp dir): VmRSS `settleS` after the log says the
 * first sync completed (-v=2, "syncProxyRules complete"), and VmHWM. A dry run holds the kernel in
 * memory (MemoryIpvsKernel, the iptables tables model), which a real run leaves in the kernel: an
 * upper bound of a running IPVS proxy's RSS, short of its API client. No root, nothing on the host
 * touched; the process is killed by its pid, the temp dir removed by its name.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statusKiB } from '../common/process-memory.js';
import { KUBE_PROXY_BIN } from '../common/proxy-entry.js';
import { scaleClusterList } from '../common/scale-cluster.js';

export interface DryRunProcessMemory {
  readonly services: number;
  readonly endpoints: number;
  /** Spawn → "syncProxyRules complete" for the first time. */
  readonly firstSyncS: number;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
  readonly load: string;
}

const FIRST_SYNC_TIMEOUT_MS = 600_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function measureDryRunProcess(services: number, endpoints: number, settleS = 20): Promise<DryRunProcessMemory> {
  const dir = mkdtempSync(join(tmpdir(), 'kp-ipvs-mem-'));
  const manifests = join(dir, 'cluster.json');
  writeFileSync(manifests, JSON.stringify(scaleClusterList(services, endpoints)));
  const start = Date.now();
  const child = spawn(KUBE_PROXY_BIN, ['--proxy-mode=ipvs', '--dry-run', `--manifests=${manifests}`, '--hostname-override=node-0', '-v=2'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let synced = 0;
  let tail = '';
  child.stderr.on('data', (b: Buffer) => {
    tail = (tail + b.toString()).slice(-2000);
    if (synced === 0 && tail.includes('syncProxyRules complete')) synced = Date.now();
  });
  try {
    while (synced === 0 && child.exitCode === null && Date.now() - start < FIRST_SYNC_TIMEOUT_MS) await sleep(200);
    if (synced === 0) throw new Error(`no first sync of bin/kube-proxy --proxy-mode=ipvs --dry-run (${services} × ${endpoints}):\n${tail}`);
    await sleep(settleS * 1000);
    const pid = child.pid as number;
    const rss = statusKiB(pid, 'VmRSS');
    const peak = statusKiB(pid, 'VmHWM');
    if (rss === undefined || peak === undefined) throw new Error(`the dry-run proxy exited before it was measured:\n${tail}`);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    return { services, endpoints, firstSyncS: (synced - start) / 1000, rssMiB: rss / 1024, peakRssMiB: peak / 1024, load };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
