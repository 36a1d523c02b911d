/**
 * The rig the API-server real-kernel suites share: a simulated node (libs/testing/netns) with TCP echo
 * servers in three pods, kubelet's iptables-nft hint chain, a TestApiServer inside the node namespace
 * (netns-api-server.ts) holding the objects the suite starts with, and `bin/kube-proxy --master` in
 * iptables mode in that namespace, started once those objects exist and waited for (bounded) until
 * its first sync is in the kernel. Probes run from pod3. Every step is bounded; stop() undoes it all
 * by exact name.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cleanupStaleRuns,
  createSimulatedNode,
  iptables,
  iptablesSave,
  probe,
  runPrefix,
  startEchoServer,
  waitFor,
  type EchoServer,
  type ProbeOptions,
  type ProbeResult,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import type { KubeObject } from '@kube-proxy/testing-apiserver';
import { fail, pollProbe } from '../support/probe-assertions.js';
import { PROXY_MAIN_JS, startProxy, type RunningProxy } from '../support/proxy.js';
import { NetnsApiServer } from './netns-api-server.js';

export const VARIANT = 'nft' as const;
export const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
export const POD_TCP_PORT = 8080;
export const FIRST_SYNC_TIMEOUT_MS = existsSync(PROXY_MAIN_JS) ? 30_000 : 120_000;

export interface ApiNodeRigOptions {
  /** Namespace tag (4 letters, unique per suite); namespaces are `<tag><pid>-…`. */
  readonly tag: string;
  /** Objects created on the API server before the proxy starts. */
  readonly objects: readonly KubeObject[] | ((rig: { podIp(i: number): string }) => readonly KubeObject[]);
  /** A cluster IP that must be in the nat table for the first sync to count as done (default: KUBE-SERVICES suffices). */
  readonly firstSyncIp?: string;
  /** Proxy flags after `--master=… --proxy-mode=iptables --hostname-override=node-1 --cluster-cidr=…`. */
  readonly proxyArgs: readonly string[];
  readonly proxyEnv?: Readonly<Record<string, string>>;
  /** Lifetime of echo servers and the API server host (they exit by themselves after it). */
  readonly lifetimeS?: number;
  /** Timings go here (the suite's CheckRunner's). */
  readonly timings: Record<string, number | string>;
}

export class ApiNodeRig {
  proxy: RunningProxy | undefined;
  api: NetnsApiServer | undefined;
  private servers: EchoServer[] = [];

  private constructor(
    readonly node: SimulatedNode,
    readonly dir: string,
  ) {}

  /** Builds everything; on failure what was built so far is left for stop() (call it from afterAll). */
  static async start(o: ApiNodeRigOptions, hold: (rig: ApiNodeRig) => void): Promise<ApiNodeRig> {
    const started = Date.now();
    const dir = mkdtempSync(join(tmpdir(), `kp-e2e-${o.tag}-`));
    await cleanupStaleRuns(o.tag);
    const rig = new ApiNodeRig(await createSimulatedNode({ prefix: runPrefix(o.tag) }), dir);
    hold(rig);
    const n = rig.node;
    const lifetimeS = o.lifetimeS ?? 300;
    rig.servers = await Promise.all(n.pods.map((pd) => startEchoServer(n, pd.ns, { tcpPorts: [POD_TCP_PORT], maxLifetimeS: lifetimeS })));
    await iptables(n, n.ns.node, VARIANT, ['-t', 'mangle', '-N', HINT_CHAIN]);
    rig.api = await NetnsApiServer.start(n, { lifetimeS });
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(rig.api.url)) fail(`unexpected API server URL ${rig.api.url}`);
    const objects = typeof o.objects === 'function' ? o.objects(rig) : o.objects;
    for (const obj of objects) await rig.api.create(obj);
    o.timings['setup (netns + echo servers + API server)'] = Date.now() - started;

    const t0 = Date.now();
    rig.proxy = startProxy(
      n,
      [`--master=${rig.api.url}`, '--proxy-mode=iptables', '--hostname-override=node-1', '--cluster-cidr=10.244.0.0/16', ...o.proxyArgs],
      { logFile: join(dir, 'proxy.log'), ...(o.proxyEnv ? { env: o.proxyEnv } : {}) },
    );
    await waitFor(
      'the proxy to program its first sync from the API server',
      async () => {
        if (rig.proxy?.exited()) fail(`kube-proxy exited with ${rig.proxy.exitCode()}:\n${rig.proxy.tail(60)}`);
        const nat = await rig.nat();
        return (o.firstSyncIp === undefined || nat.includes(`${o.firstSyncIp}/32`)) && nat.includes('KUBE-SERVICES') ? true : undefined;
      },
      { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 200 },
    );
    o.timings['proxy start → first sync'] = Date.now() - t0;
    return rig;
  }

  get server(): NetnsApiServer {
    return this.api ?? fail('the API server was not started');
  }

  podIp(i: number): string {
    return this.node.pods[i - 1]?.ip ?? fail(`no pod${i}`);
  }

  pod3(): string {
    return this.node.ns.pods[2] ?? fail('no pod3');
  }

  /** TCP probes from pod3. */
  probe(o: ProbeOptions): Promise<ProbeResult> {
    return probe(this.node, this.pod3(), { stopAfterErrors: 5, ...o });
  }

  /**
   * Polls probes (`count` tries each) from pod3 until `done` holds, bounded by `timeoutMs`. Checking
   * that an endpoint is gone needs many tries per poll: with two endpoints, 4 tries miss one 1 time in 16.
   */
  async until(what: string, target: { ip: string; port: number }, done: (r: ProbeResult) => boolean, timeoutMs: number, count = 4): Promise<void> {
    await pollProbe(what, () => this.probe({ host: target.ip, port: target.port, count, timeoutMs: 300, stopAfterErrors: 1 }), done, timeoutMs);
  }

  nat(): Promise<string> {
    return iptablesSave(this.node, this.node.ns.node, VARIANT, 'nat');
  }

  async diagnostics(): Promise<string> {
    const save = await this.nat().catch((e: Error) => `iptables-${VARIANT}-save failed: ${e.message}`);
    return (
      `=== ip netns exec ${this.node.ns.node} iptables-${VARIANT}-save -t nat\n${save}\n` +
      `=== API server host stderr\n${this.api?.stderr().slice(-4000) ?? '(not started)'}\n` +
      `=== proxy log (last 80 lines; full log in ${join(this.dir, 'proxy.log')})\n${this.proxy ? this.proxy.tail(80) : '(proxy not started)'}\n`
    );
  }

  /** Stops the proxy, the API server and the echo servers, deletes the namespaces; keeps `dir` when `keepDir`. */
  async stop(keepDir: boolean): Promise<unknown> {
    const stop = this.proxy ? await this.proxy.stop() : undefined;
    await this.api?.stop();
    await Promise.all(this.servers.map((s) => s.stop()));
    await this.node.destroy();
    if (!keepDir) rmSync(this.dir, { recursive: true, force: true });
    return stop;
  }
}
