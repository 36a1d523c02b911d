/**
 * One idle-proxy measurement: a simulated node's network namespace, the real `bin/kube-proxy` in it
 * writing real rules (iptables-legacy or nftables) for N Services × E endpoints read either from
 * one manifest `List` file (--manifests) or from the test API server in the same namespace. Once its
 * log says IPv4's first full sync is applied, the proxy settles, then its CPU time and VmRSS are
 * sampled over an idle window in which nothing changes. Everything runs in namespaces this creates
 * and deletes by name, under the harness watchdog.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanupStaleRuns, createSimulatedNode, iptables, runPrefix, sleep, waitFor, type SimulatedNode } from '@kube-proxy/testing-netns';
import { BENCH_NODE_NAME, simulatedNodeObject } from '../common/simulated-node-object.js';
import { cpuTimeline, idleFigures, sampleIdle, type IdleFigures } from './idle-proxy-sample.js';
import { NetnsApiHost } from '../common/netns-api-host.js';
import { childPid } from '../common/process-memory.js';
import { KUBE_PROXY_BIN } from '../common/proxy-entry.js';
import { scaleCluster } from '../common/scale-cluster.js';

const TAG = 'kpidl';
const NODE_NAME = BENCH_NODE_NAME;
const FIRST_SYNC_TIMEOUT_MS = 300_000;
const LOG_TAIL = 20_000;
/** What bin/kube-proxy's shebang sets, for --proxy-main runs (keep in step with bin/kube-proxy). */
const BIN_NODE_FLAGS = ['--max-semi-space-size=4', '--expose-gc'];
const BIN_MALLOC_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

export type IdleMode = 'iptables' | 'nftables';
export type IdleSource = 'manifests' | 'api';

export interface IdleRunOptions {
  readonly mode: IdleMode;
  readonly source: IdleSource;
  readonly services: number;
  readonly endpointsPerService: number;
  /** Seconds after the first sync before sampling starts. */
  readonly settleS: number;
  /** Seconds sampled. */
  readonly idleS: number;
  /** A scratch folder for the manifest file. */
  readonly workDir: string;
  /** Another build's main.js to run instead of bin/kube-proxy (a checkout before a change), with bin/kube-proxy's runtime settings. */
  readonly proxyMain?: string;
  readonly log: (line: string) => void;
}

export interface IdleRun extends IdleFigures {
  readonly mode: IdleMode;
  readonly source: IdleSource;
  /** Proxy spawn → IPv4's first full sync applied (its log line). */
  readonly firstSyncMs: number;
  /** Syncs the proxy logged during the idle window (periodic resyncs included). */
  readonly syncsWhileIdle: number;
  /** The proxy's own CPU ticks (1/100 s) per 5 s of the window: steady or periodic work. */
  readonly cpuTicksPer5s: readonly number[];
}


/** Feeds the cluster to the proxy: the --manifests/--master argument, and the API host to stop afterwards. */
async function provideCluster(node: SimulatedNode, opts: IdleRunOptions, lifetimeS: number): Promise<{ arg: string; api?: NetnsApiHost }> {
  const cluster = scaleCluster(opts.services, opts.endpointsPerService);
  const objects = [simulatedNodeObject(), ...cluster.services, ...cluster.slices];
  if (opts.source === 'manifests') {
    const file = join(opts.workDir, `cluster-${opts.services}x${opts.endpointsPerService}.json`);
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    return { arg: `--manifests=${file}` };
  }
  const api = await NetnsApiHost.start(node, lifetimeS);
  await api.createAll(objects);
  return { arg: `--master=${api.url}`, api };
}

export async function measureIdleProxy(opts: IdleRunOptions): Promise<IdleRun> {
  await cleanupStaleRuns(TAG);
  const node = await createSimulatedNode({ prefix: runPrefix(TAG), podCount: 1 });
  const lifetimeS = Math.ceil(FIRST_SYNC_TIMEOUT_MS / 1000) + opts.settleS + opts.idleS + 120;
  let api: NetnsApiHost | undefined;
  let logTail = '';
  try {
    // kubelet's hint chain in the legacy tables makes the iptables mode pick iptables-legacy.
    if (opts.mode === 'iptables') await iptables(node, node.ns.node, 'legacy', ['-t', 'mangle', '-N', 'KUBE-IPTABLES-HINT']);
    const provided = await provideCluster(node, opts, lifetimeS);
    api = provided.api;
    const args = [provided.arg, `--proxy-mode=${opts.mode}`, `--hostname-override=${NODE_NAME}`, '--cluster-cidr=10.244.0.0/16', '--v=2'];
    const started = Date.now();
    const [cmd, cmdArgs, env] = opts.proxyMain
      ? [process.execPath, [...BIN_NODE_FLAGS, opts.proxyMain, ...args], BIN_MALLOC_ENV]
      : [KUBE_PROXY_BIN, args, {}];
    const watchdog = node.spawn(node.ns.node, cmd, cmdArgs, { watchdogLifetimeS: lifetimeS, stdio: ['pipe', 'pipe', 'pipe'], env });
    let firstSyncAt: number | undefined;
    let syncs = 0;
    let partial = ''; // a line split across chunks is matched once complete
    const onData = (d: Buffer) => {
      const text = d.toString('utf8');
      const lines = (partial + text).split('\n');
      partial = lines.pop()!.slice(-LOG_TAIL);
      const ipv4Syncs = lines.filter((l) => /SyncProxyRules complete.*ipFamily="IPv4"/.test(l)).length;
      if (ipv4Syncs > 0 && firstSyncAt === undefined) firstSyncAt = Date.now();
      syncs += ipv4Syncs;
      logTail = (logTail + text).slice(-LOG_TAIL);
    };
    watchdog.stdout?.on('data', onData);
    watchdog.stderr?.on('data', onData);
    const needle = opts.proxyMain ?? 'kube-proxy';
    const pid = await waitFor('the proxy process', async () => childPid(watchdog.pid!, needle), { timeoutMs: 10_000, intervalMs: 50 });
    await waitFor(
      'the first full sync',
      async () => {
        if (watchdog.exitCode !== null) throw new Error(`the proxy exited (${watchdog.exitCode}):\n${logTail.slice(-3000)}`);
        return firstSyncAt !== undefined ? true : undefined;
      },
      { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 200 },
    );
    const firstSyncMs = firstSyncAt! - started;
    opts.log(`  ${opts.mode}/${opts.source}: first sync ${firstSyncMs} ms after spawn; settling ${opts.settleS} s, then ${opts.idleS} s idle`);
    await sleep(opts.settleS * 1000);
    const syncsBefore = syncs;
    const samples = await sampleIdle(pid, opts.idleS);
    const syncsWhileIdle = syncs - syncsBefore;
    watchdog.kill('SIGTERM');
    const cpuTicksPer5s = cpuTimeline(samples, 5000);
    opts.log(`  ${opts.mode}/${opts.source}: CPU ticks (1/100 s) per 5 s while idle: ${cpuTicksPer5s.join(' ')}`);
    return { mode: opts.mode, source: opts.source, firstSyncMs, syncsWhileIdle, cpuTicksPer5s, ...idleFigures(samples) };
  } catch (err) {
    throw new Error(`${(err as Error).message}\nproxy log tail:\n${logTail.slice(-3000)}`);
  } finally {
    api?.stop();
    await node.destroy();
  }
}
