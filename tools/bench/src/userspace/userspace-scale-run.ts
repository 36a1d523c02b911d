/**
 * One size of the userspace scale bench (issue 24, items 1 and 2 for the userspace mode): a simulated
 * node's network namespace, the test API server there holding N Services × E endpoints, and
 * `bin/kube-proxy --proxy-mode=userspace` against it, as root, so it opens a proxy socket per service
 * port and installs its capture rules with iptables-legacy. It measures the cold start (spawn → the
 * IPv4 sync that put the first and the last Service's capture rules into the kernel, which comes after
 * every socket is open), the kernel tool's floor (iptables-legacy-restore of the same tables into an
 * empty namespace), settled RSS and VmHWM, and one-endpoint changes: the proxy's own
 * "SyncProxyRules complete" line gives each sync's wall time and the process's CPU over it (our
 * compute; iptables-restore runs as a child and is not in it). Namespaces are created and deleted by
 * name, every wait is bounded.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cleanupStaleRuns, createSimulatedNode, iptables, iptablesSave, runPrefix, sleep, waitFor, type SimulatedNode } from '@kube-proxy/testing-netns';
import { BENCH_NODE_NAME, simulatedNodeObject } from '../common/simulated-node-object.js';
import { NetnsApiHost } from '../common/netns-api-host.js';
import { childPid, statusKiB } from '../common/process-memory.js';
import { legacyRestoreMs } from '../common/legacy-restore-yardstick.js';
import { KUBE_PROXY_BIN } from '../common/proxy-entry.js';
import { scaleCluster, sliceOf } from '../common/scale-cluster.js';
import { poll, SyncLineWatcher, type SyncLine } from './sync-line-watcher.js';

const TAG = 'kpus';
const NODE_NAME = BENCH_NODE_NAME;
const FIRST_SYNC_TIMEOUT_MS = 600_000;
const CHANGE_TIMEOUT_MS = 60_000;
const SNAPSHOT_TIMEOUT_MS = 300_000;

export interface UserspaceScaleOptions {
  readonly services: number;
  readonly endpointsPerService: number;
  readonly settleS: number;
  /** One-endpoint changes measured after settling (each waits for its own sync). */
  readonly changes: number;
  /** Have the proxy write a heap snapshot here after the RSS reading (SIGUSR2). */
  readonly snapshotDir?: string;
  readonly log: (line: string) => void;
}

export interface UserspaceScaleResult {
  readonly services: number;
  readonly endpointsPerService: number;
  /** Spawn → the IPv4 sync whose capture rules (first and last Service) are in the kernel. */
  readonly coldStartMs: number;
  /** The proxy's own report of that sync: wall and CPU. */
  readonly firstSync: SyncLine;
  /** iptables-legacy-restore of the nat and filter tables the proxy left, into an empty namespace (median of 3). */
  readonly kernelApplyMs: number;
  /** TCP listeners the proxy opened (listening sockets in the namespace, less those before it started). */
  readonly listeners: number;
  readonly natRules: number;
  readonly rssKiB: number;
  readonly peakKiB: number;
  /** One sync per one-endpoint change. */
  readonly changeSyncs: readonly SyncLine[];
  readonly snapshot?: string;
}


async function tcpListeners(node: SimulatedNode): Promise<number> {
  const r = await node.exec(node.ns.node, 'ss', ['-Htln'], { timeoutMs: 60_000 });
  return r.stdout.split('\n').filter((l) => l.trim() !== '').length;
}

/** Moves one endpoint of one Service per change and reads the proxy's sync line for it. */
async function measureChanges(api: NetnsApiHost, watcher: SyncLineWatcher, opts: UserspaceScaleOptions): Promise<SyncLine[]> {
  const out: SyncLine[] = [];
  for (let c = 1; c <= opts.changes; c++) {
    // A different Service each time, spread over the cluster; resourceVersion grows with the shift.
    const i = Math.floor((opts.services * c) / (opts.changes + 1));
    const seen = watcher.count();
    await api.updateAll([sliceOf(i, opts.endpointsPerService, c)]);
    const line = await watcher.next(seen, CHANGE_TIMEOUT_MS);
    out.push(line);
    opts.log(`  change ${c} (svc-${i}): sync ${line.elapsedMs} ms wall, ${line.cpuMs} ms CPU`);
    // Past --min-sync-period (1 s), so the next change gets a sync of its own.
    await sleep(1500);
  }
  return out;
}

async function takeSnapshot(pid: number, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  let lastSize = -1;
  return waitFor(
    'the proxy to write its heap snapshot',
    async () => {
      const hit = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
      if (hit === undefined) return undefined;
      const size = statSync(join(dir, hit)).size;
      // Complete once its size stops growing between two polls.
      const done = size > 0 && size === lastSize;
      lastSize = size;
      return done ? join(dir, hit) : undefined;
    },
    { timeoutMs: SNAPSHOT_TIMEOUT_MS, intervalMs: 2000 },
  );
}

export async function measureUserspaceScale(opts: UserspaceScaleOptions): Promise<UserspaceScaleResult> {
  if (!existsSync(KUBE_PROXY_BIN)) throw new Error(`${KUBE_PROXY_BIN} is missing`);
  await cleanupStaleRuns(TAG);
  const node = await createSimulatedNode({ prefix: runPrefix(TAG), podCount: 1 });
  let api: NetnsApiHost | undefined;
  const lifetimeS = Math.ceil((FIRST_SYNC_TIMEOUT_MS + SNAPSHOT_TIMEOUT_MS) / 1000) + opts.settleS + opts.changes * 70 + 300;
  try {
    // kubelet's hint chain in the legacy tables: the mode selection picks iptables-legacy, as on such a node.
    await iptables(node, node.ns.node, 'legacy', ['-t', 'mangle', '-N', 'KUBE-IPTABLES-HINT']);
    api = await NetnsApiHost.start(node, lifetimeS);
    const cluster = scaleCluster(opts.services, opts.endpointsPerService);
    const t0 = Date.now();
    await api.createAll([simulatedNodeObject(), ...cluster.services, ...cluster.slices]);
    opts.log(`  API server loaded with ${cluster.services.length} Services + ${cluster.slices.length} EndpointSlices in ${Date.now() - t0} ms`);
    const before = await tcpListeners(node);
    if (opts.snapshotDir) mkdirSync(opts.snapshotDir, { recursive: true });
    const env = opts.snapshotDir ? { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${opts.snapshotDir}` } : {};
    const started = Date.now();
    const args = [`--master=${api.url}`, '--proxy-mode=userspace', `--hostname-override=${NODE_NAME}`, '--v=2'];
    const proxy = node.spawn(node.ns.node, KUBE_PROXY_BIN, args, { watchdogLifetimeS: lifetimeS, stdio: ['pipe', 'pipe', 'pipe'], env });
    const watcher = new SyncLineWatcher('IPv4', () => (proxy.exitCode !== null ? `the proxy exited (${proxy.exitCode})` : undefined));
    proxy.stdout?.on('data', (d: Buffer) => watcher.feed(d));
    proxy.stderr?.on('data', (d: Buffer) => watcher.feed(d));
    const pid = await waitFor('the proxy process', async () => childPid(proxy.pid!, 'kube-proxy'), { timeoutMs: 10_000, intervalMs: 50 });
    const cold = await firstSyncInKernel(node, cluster, watcher, started);
    opts.log(`  capture rules of every Service in the kernel ${cold.coldStartMs} ms after spawn (that sync: ${cold.firstSync.elapsedMs} ms wall, ${cold.firstSync.cpuMs} ms CPU)`);
    const listeners = (await tcpListeners(node)) - before;
    const settleUntil = Date.now() + opts.settleS * 1000;
    const tables = `${await iptablesSave(node, node.ns.node, 'legacy', 'filter')}${cold.nat}`;
    const kernelApplyMs = await legacyRestoreMs(Buffer.from(tables, 'latin1'), 3, `${TAG}-yard`);
    await sleep(Math.max(0, settleUntil - Date.now()));
    const rssKiB = statusKiB(pid, 'VmRSS');
    const peakKiB = statusKiB(pid, 'VmHWM');
    if (rssKiB === undefined || peakKiB === undefined) throw new Error(`the proxy is gone:\n${watcher.tail()}`);
    opts.log(`  settled: VmRSS ${Math.round(rssKiB / 1024)} MB, VmHWM ${Math.round(peakKiB / 1024)} MB; ${listeners} listeners; capture rules restore in ${kernelApplyMs} ms into an empty namespace`);
    const changeSyncs = await measureChanges(api, watcher, opts);
    const snapshot = opts.snapshotDir ? await takeSnapshot(pid, opts.snapshotDir) : undefined;
    proxy.kill('SIGTERM');
    const natRules = cold.nat.split('\n').filter((l) => l.startsWith('-A ')).length;
    return { services: opts.services, endpointsPerService: opts.endpointsPerService, coldStartMs: cold.coldStartMs, firstSync: cold.firstSync, kernelApplyMs, listeners, natRules, rssKiB, peakKiB, changeSyncs, ...(snapshot ? { snapshot } : {}) };
  } finally {
    api?.stop();
    await node.destroy();
  }
}

async function firstSyncInKernel(
  node: SimulatedNode,
  cluster: ReturnType<typeof scaleCluster>,
  watcher: SyncLineWatcher,
  started: number,
): Promise<{ coldStartMs: number; firstSync: SyncLine; nat: string }> {
  const first = cluster.services[0]!.spec!.clusterIP!;
  const last = cluster.services[cluster.services.length - 1]!.spec!.clusterIP!;
  let nat = '';
  await poll(
    'the capture rules of every Service in the kernel',
    async () => {
      watcher.check();
      nat = await iptablesSave(node, node.ns.node, 'legacy', 'nat', { timeoutMs: 60_000 });
      return nat.includes(`-d ${last}/32`) && nat.includes(`-d ${first}/32`) ? true : undefined;
    },
    FIRST_SYNC_TIMEOUT_MS,
    500,
  );
  // The sync that installed them logs its line as soon as its restore returns; the kernel poll can see
  // the rules a moment before. The first IPv4 line whose sync put them there is the last one seen by now
  // or the next one.
  // The jump rules are ensured after the restore (five `iptables` runs, which may wait for the xtables lock).
  const firstSync = await watcher.firstWithin(120_000);
  return { coldStartMs: firstSync.at - started, firstSync, nat };
}
