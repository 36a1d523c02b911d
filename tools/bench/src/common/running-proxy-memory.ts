/**
 * Steady-state memory of a real running proxy at scale (issue 12, item 1; issue 24): a simulated
 * node's network namespace, the test API server inside it holding N Services × E endpoints, and
 * `bin/kube-proxy --proxy-mode=MODE` there writing real rules (iptables: with iptables-legacy, as
 * kubelet's hint chain in the legacy tables makes the mode selection pick it; nftables: nft). It
 * reads VmRSS `settleS` after the first full sync is in the kernel (the last and the first Service's
 * ClusterIP served, running-proxy-probes.ts), VmHWM, can time a one-endpoint change made through
 * the API server (update sent → the new endpoint in the kernel), and can then have the proxy write a
 * heap snapshot (SIGUSR2 with --heapsnapshot-signal). Everything runs in namespaces it creates and
 * deletes by name, under the harness watchdog.
 */
import { existsSync, mkdirSync, readdirSync, openSync, readSync, fstatSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanupStaleRuns, createSimulatedNode, runPrefix, sleep, waitFor, type SimulatedNode } from '@kube-proxy/testing-netns';
import { BENCH_NODE_NAME, simulatedNodeObject } from './simulated-node-object.js';
import { NetnsApiHost } from './netns-api-host.js';
import { childPid, statusKiB } from './process-memory.js';
import { KUBE_PROXY_BIN } from './proxy-entry.js';
import { scaleCluster, sliceOf } from './scale-cluster.js';
import { kernelProbe, type RunningProxyMode } from './running-proxy-probes.js';
import { measureEndpointChange, type EndpointChangeFigure } from './running-proxy-change.js';

const TAG = 'kpmem';
const NODE_NAME = BENCH_NODE_NAME;
const FIRST_SYNC_TIMEOUT_MS = 300_000;
const SNAPSHOT_TIMEOUT_MS = 300_000;
const LOG_CAP = 200_000;

export interface RunningProxyMemory {
  /** Proxy spawn → its log says IPv4's first full sync is applied ("SyncProxyRules complete", -v=2). */
  readonly firstSyncMs: number;
  /**
   * The kernel tool's apply of the same rules into an empty namespace (iptables: iptables-legacy-restore
   * of filter and nat as the proxy left them); undefined where the mode's bench measures it instead.
   */
  readonly kernelApplyMs: number | undefined;
  /** VmRSS `settleS` after the first sync. */
  readonly rssKiB: number;
  /** VmHWM at the same moment (the peak so far, startup and first sync included). */
  readonly peakKiB: number;
  /** iptables: nat table lines; nftables: cluster-ips elements. */
  readonly natLines: number;
  /** The one-endpoint changes through the API server, when asked for (after the RSS reading). */
  readonly changes?: readonly EndpointChangeFigure[];
  /** VmRSS after those changes. */
  readonly rssAfterChangesKiB?: number;
  readonly snapshot?: string;
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

async function endpointChanges(
  count: number,
  endpointsPerService: number,
  ctx: Omit<Parameters<typeof measureEndpointChange>[0], 'slice'>,
  log: (line: string) => void,
): Promise<EndpointChangeFigure[]> {
  const changes: EndpointChangeFigure[] = [];
  for (let rep = 1; rep <= count; rep++) {
    const figure = await measureEndpointChange({ ...ctx, slice: sliceOf(0, endpointsPerService, rep) });
    log(`  one-endpoint change ${rep}: update sent → in the kernel ${figure.wallMs.toFixed(0)} ms (the proxy's sync ${figure.syncElapsedMs.toFixed(0)} ms)`);
    changes.push(figure);
  }
  return changes;
}

/** The proxy's IPv4 sync lines as they arrive, and the start of its log. */
function proxyOutput(): { syncLog: { lines: Array<{ at: number; elapsedMs: number }> }; text: () => string; onData: (d: Buffer) => void } {
  const syncLog = { lines: [] as Array<{ at: number; elapsedMs: number }> };
  let log = '';
  const onData = (d: Buffer) => {
    // IPv4's lines: the IPv6 proxier (no services here) finishes its empty first sync earlier.
    for (const m of d.toString('latin1').matchAll(/SyncProxyRules complete[^\n]*ipFamily="IPv4"[^\n]*/g)) {
      const elapsed = /elapsedMs=([0-9.]+)/.exec(m[0]);
      syncLog.lines.push({ at: Date.now(), elapsedMs: elapsed ? Number(elapsed[1]) : Number.NaN });
    }
    if (log.length < LOG_CAP) log += d.toString('utf8');
  };
  return { syncLog, text: () => log, onData };
}

export async function measureRunningProxy(opts: {
  /** Default iptables. */
  mode?: RunningProxyMode;
  /** One-endpoint changes of the first Service through the API server, timed one after the other. */
  endpointChanges?: number;
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
  const probe = kernelProbe(opts.mode ?? 'iptables');
  await cleanupStaleRuns(TAG);
  const node: SimulatedNode = await createSimulatedNode({ prefix: runPrefix(TAG), podCount: 1 });
  let api: NetnsApiHost | undefined;
  let proxyLog = (): string => '';
  const lifetimeS = Math.ceil((FIRST_SYNC_TIMEOUT_MS + SNAPSHOT_TIMEOUT_MS) / 1000) + opts.settleS + 300;
  try {
    await probe.prepare(node);
    api = await NetnsApiHost.start(node, lifetimeS);
    const cluster = scaleCluster(opts.services, opts.endpointsPerService);
    const t0 = Date.now();
    await api.createAll([simulatedNodeObject(), ...cluster.services, ...cluster.slices]);
    opts.log(`  API server loaded with ${cluster.services.length} Services + ${cluster.slices.length} EndpointSlices in ${Date.now() - t0} ms`);
    const first = cluster.services[0]!.spec!.clusterIP!;
    const last = cluster.services[cluster.services.length - 1]!.spec!.clusterIP!;

    if (opts.snapshotDir) mkdirSync(opts.snapshotDir, { recursive: true });
    const env = opts.snapshotDir ? { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${opts.snapshotDir}` } : {};
    const started = Date.now();
    const watchdog = node.spawn(
      node.ns.node,
      KUBE_PROXY_BIN,
      [`--master=${api.url}`, `--proxy-mode=${probe.mode}`, `--hostname-override=${NODE_NAME}`, '--cluster-cidr=10.244.0.0/16', '--v=2'],
      { watchdogLifetimeS: lifetimeS, stdio: ['pipe', 'pipe', 'pipe'], env },
    );
    const { syncLog, text, onData } = proxyOutput();
    proxyLog = text;
    for (const stream of [watchdog.stdout, watchdog.stderr]) stream?.on('data', onData);
    const pid = await waitFor('the proxy process', async () => childPid(watchdog.pid!, 'kube-proxy'), { timeoutMs: 10_000, intervalMs: 50 });
    await waitFor(
      'the first full sync in the kernel',
      async () => {
        if (watchdog.exitCode !== null) throw new Error(`the proxy exited (${watchdog.exitCode}):\n${proxyLog().slice(-3000)}`);
        return (await probe.applied(node, first, last)) ? true : undefined;
      },
      { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 500 },
    );
    // The log line can trail the kernel check by a poll; the kernel check confirms the rules are there.
    await waitFor('the first sync log line', async () => (syncLog.lines.length > 0 ? true : undefined), { timeoutMs: 10_000, intervalMs: 20 });
    const firstSyncMs = syncLog.lines[0]!.at - started;
    opts.log(`  first sync applied ${firstSyncMs} ms after spawn; settling ${opts.settleS} s`);
    const settleUntil = Date.now() + opts.settleS * 1000;
    // The yardstick runs while the proxy settles (another namespace; the proxy is idle by now).
    const kernelApplyMs = await probe.kernelApplyMs(node, `${TAG}-yard`);
    const natLines = await probe.size(node);
    await sleep(Math.max(0, settleUntil - Date.now()));
    const rssKiB = statusKiB(pid, 'VmRSS');
    const peakKiB = statusKiB(pid, 'VmHWM');
    if (rssKiB === undefined || peakKiB === undefined) throw new Error(`the proxy is gone:\n${proxyLog().slice(-3000)}`);
    const changes = await endpointChanges(opts.endpointChanges ?? 0, opts.endpointsPerService, { node, api, probe, syncLog }, opts.log);
    const rssAfterChangesKiB = changes.length > 0 ? statusKiB(pid, 'VmRSS') : undefined;
    let snapshot: string | undefined;
    if (opts.snapshotDir) {
      process.kill(pid, 'SIGUSR2');
      snapshot = await waitForSnapshot(opts.snapshotDir, pid);
    }
    watchdog.kill('SIGTERM');
    if (opts.proxyLogFile) writeFileSync(opts.proxyLogFile, proxyLog());
    return {
      firstSyncMs,
      kernelApplyMs,
      rssKiB,
      peakKiB,
      natLines,
      ...(changes.length > 0 ? { changes, ...(rssAfterChangesKiB !== undefined ? { rssAfterChangesKiB } : {}) } : {}),
      ...(snapshot ? { snapshot } : {}),
    };
  } finally {
    api?.stop();
    await node.destroy();
  }
}
