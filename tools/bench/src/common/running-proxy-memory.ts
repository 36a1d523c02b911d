/**
 * Steady-state memory of a real running proxy at scale (issue 12, item 1): a simulated node's network
 * namespace, the test API server inside it holding N Services × E endpoints, and `bin/kube-proxy
 * --proxy-mode=iptables` there writing real rules with iptables-legacy (kubelet's hint chain in the
 * legacy tables makes the mode selection pick it). It reads VmRSS `settleS` after the first full sync
 * is in the kernel (the last and the first Service's ClusterIP rules both present), VmHWM, and can
 * then have the proxy write a heap snapshot (SIGUSR2 with --heapsnapshot-signal). Everything runs in
 * namespaces it creates and deletes by name, under the harness watchdog.
 */
import { existsSync, mkdirSync, readdirSync, openSync, readSync, fstatSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  NODE_IP,
  cleanupStaleRuns,
  createSimulatedNode,
  iptables,
  iptablesSave,
  runPrefix,
  sleep,
  waitFor,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { NetnsApiHost } from './netns-api-host.js';
import { childPid, statusKiB } from './process-memory.js';
import { legacyRestoreMs } from './legacy-restore-yardstick.js';
import { KUBE_PROXY_BIN } from './proxy-entry.js';
import { scaleCluster } from './scale-cluster.js';

const TAG = 'kpmem';
const NODE_NAME = 'node-0';
const FIRST_SYNC_TIMEOUT_MS = 300_000;
const SNAPSHOT_TIMEOUT_MS = 300_000;
const LOG_CAP = 200_000;

export interface RunningProxyMemory {
  /** Proxy spawn → its log says IPv4's first full sync is applied ("SyncProxyRules complete", -v=2). */
  readonly firstSyncMs: number;
  /** iptables-legacy-restore of the same tables (filter and nat as the proxy left them) into an empty namespace. */
  readonly kernelApplyMs: number;
  /** VmRSS `settleS` after the first sync. */
  readonly rssKiB: number;
  /** VmHWM at the same moment (the peak so far, startup and first sync included). */
  readonly peakKiB: number;
  readonly natLines: number;
  readonly snapshot?: string;
}

function nodeObject(): object {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE_NAME, labels: { 'kubernetes.io/hostname': NODE_NAME } },
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
    status: { addresses: [{ type: 'InternalIP', address: NODE_IP }, { type: 'Hostname', address: NODE_NAME }] },
  };
}

/** A complete .heapsnapshot ends with the strings array and the closing brace. */
function snapshotComplete(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size < 16) return false;
    const tail = Buffer.alloc(16);
    readSync(fd, tail, 0, 16, size - 16);
    return /\]\s*\}\s*$/.test(tail.toString('latin1'));
  } finally {
    closeSync(fd);
  }
}

async function waitForSnapshot(dir: string, pid: number): Promise<string> {
  return waitFor(
    'the proxy to write its heap snapshot',
    async () => {
      const hit = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && f.includes(`.${pid}.`));
      return hit && snapshotComplete(join(dir, hit)) ? join(dir, hit) : undefined;
    },
    { timeoutMs: SNAPSHOT_TIMEOUT_MS, intervalMs: 1000 },
  );
}

export async function measureRunningProxy(opts: {
  services: number;
  endpointsPerService: number;
  settleS: number;
  /** Write a heap snapshot into this folder after the reading. */
  snapshotDir?: string;
  log: (line: string) => void;
  /** Keep the proxy's log (its first 200 kB, -v=2) here. */
  proxyLogFile?: string;
}): Promise<RunningProxyMemory> {
  if (!existsSync(KUBE_PROXY_BIN)) throw new Error(`${KUBE_PROXY_BIN} is missing`);
  await cleanupStaleRuns(TAG);
  const node: SimulatedNode = await createSimulatedNode({ prefix: runPrefix(TAG), podCount: 1 });
  let api: NetnsApiHost | undefined;
  let proxyLog = '';
  const lifetimeS = Math.ceil((FIRST_SYNC_TIMEOUT_MS + SNAPSHOT_TIMEOUT_MS) / 1000) + opts.settleS + 300;
  try {
    await iptables(node, node.ns.node, 'legacy', ['-t', 'mangle', '-N', 'KUBE-IPTABLES-HINT']);
    api = await NetnsApiHost.start(node, lifetimeS);
    const cluster = scaleCluster(opts.services, opts.endpointsPerService);
    const t0 = Date.now();
    await api.createAll([nodeObject(), ...cluster.services, ...cluster.slices]);
    opts.log(`  API server loaded with ${cluster.services.length} Services + ${cluster.slices.length} EndpointSlices in ${Date.now() - t0} ms`);
    const first = cluster.services[0]!.spec!.clusterIP!;
    const last = cluster.services[cluster.services.length - 1]!.spec!.clusterIP!;

    if (opts.snapshotDir) mkdirSync(opts.snapshotDir, { recursive: true });
    const env = opts.snapshotDir ? { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${opts.snapshotDir}` } : {};
    const started = Date.now();
    const watchdog = node.spawn(
      node.ns.node,
      KUBE_PROXY_BIN,
      [`--master=${api.url}`, '--proxy-mode=iptables', `--hostname-override=${NODE_NAME}`, '--cluster-cidr=10.244.0.0/16', '--v=2'],
      { watchdogLifetimeS: lifetimeS, stdio: ['pipe', 'pipe', 'pipe'], env },
    );
    let firstSyncAt: number | undefined;
    const onData = (d: Buffer) => {
      // IPv4's line: the IPv6 proxier (no services here) finishes its empty first sync earlier.
      if (firstSyncAt === undefined && /SyncProxyRules complete[^\n]*ipFamily="IPv4"/.test(d.toString('latin1'))) firstSyncAt = Date.now();
      if (proxyLog.length < LOG_CAP) proxyLog += d.toString('utf8');
    };
    watchdog.stdout?.on('data', onData);
    watchdog.stderr?.on('data', onData);
    const pid = await waitFor('the proxy process', async () => childPid(watchdog.pid!, 'kube-proxy'), { timeoutMs: 10_000, intervalMs: 50 });
    let nat = '';
    await waitFor(
      'the first full sync in the kernel',
      async () => {
        if (watchdog.exitCode !== null) throw new Error(`the proxy exited (${watchdog.exitCode}):\n${proxyLog.slice(-3000)}`);
        nat = await iptablesSave(node, node.ns.node, 'legacy', 'nat');
        return nat.includes(`-d ${last}/32`) && nat.includes(`-d ${first}/32`) ? true : undefined;
      },
      { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 500 },
    );
    // The log line can trail the kernel check by a poll; the kernel check confirms the rules are there.
    await waitFor('the first sync log line', async () => (firstSyncAt !== undefined ? true : undefined), { timeoutMs: 10_000, intervalMs: 20 });
    const firstSyncMs = firstSyncAt! - started;
    opts.log(`  first sync applied ${firstSyncMs} ms after spawn; settling ${opts.settleS} s`);
    const settleUntil = Date.now() + opts.settleS * 1000;
    // The yardstick runs while the proxy settles (another namespace; the proxy is idle by now).
    // Less the one nfacct match (its counter object exists only in the node's namespace): one rule of 70,000.
    const tables = `${await iptablesSave(node, node.ns.node, 'legacy', 'filter')}${nat}`.replace(/ -m nfacct --nfacct-name +\S+/g, '');
    const kernelApplyMs = await legacyRestoreMs(Buffer.from(tables, 'latin1'), 3, `${TAG}-yard`);
    await sleep(Math.max(0, settleUntil - Date.now()));
    const rssKiB = statusKiB(pid, 'VmRSS');
    const peakKiB = statusKiB(pid, 'VmHWM');
    if (rssKiB === undefined || peakKiB === undefined) throw new Error(`the proxy is gone:\n${proxyLog.slice(-3000)}`);
    let snapshot: string | undefined;
    if (opts.snapshotDir) {
      process.kill(pid, 'SIGUSR2');
      snapshot = await waitForSnapshot(opts.snapshotDir, pid);
    }
    watchdog.kill('SIGTERM');
    if (opts.proxyLogFile) writeFileSync(opts.proxyLogFile, proxyLog);
    return { firstSyncMs, kernelApplyMs, rssKiB, peakKiB, natLines: nat.split('\n').length, ...(snapshot ? { snapshot } : {}) };
  } finally {
    api?.stop();
    await node.destroy();
  }
}
