/**
 * Real-kernel e2e of the API-server path (issue 4, "in a network namespace with real rules and real
 * traffic"): `bin/kube-proxy --master=http://127.0.0.1:PORT --proxy-mode=iptables` runs inside the node
 * namespace of a simulated node (tools/src/netns) against a TestApiServer that runs in that same
 * namespace (tools/src/netns/test-apiserver-host.mjs; the root namespace's loopback is not reachable
 * from there). Objects are created/updated on the API server; real TCP traffic from pod3 checks the
 * rules the proxy programmed with iptables-nft (selected through kubelet's hint chain).
 *
 * Root-only; skipped (loudly) otherwise.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test-only: the e2e suites drive the netns harness of tools
import {
  cleanupStaleRuns,
  createSimulatedNode,
  describeProbe,
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
} from '@kube-proxy/tools/netns';
import { NetnsApiServer } from './api-support/netns-api-server.js';
import { endpointSlice, node as nodeObject, service } from './api-support/objects.js';
import { allOk, fail, hitsAll, onlyPods, pollProbe } from './support/probe-assertions.js';
import { CheckRunner } from './support/check-runner.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { PROXY_MAIN_JS, startProxy, type RunningProxy } from './support/proxy.js';

const pre = await e2ePreflight('API datapath');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpad';
const VARIANT = 'nft' as const;
const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
const POD_TCP_PORT = 8080;
/** Long on purpose: changes must show up through watch events + minSyncPeriod, not the periodic resync. */
const SYNC_PERIOD_S = 30;
const MIN_SYNC_PERIOD_MS = 1000;
/** "A few seconds" on top of minSyncPeriod for an event → rules → traffic round trip. */
const EVENT_SLACK_MS = 5000;
/** After the watches are cut the informers must re-watch (or relist) first: allow a reconnect backoff. */
const REWATCH_BOUND_MS = 15_000;
const FIRST_SYNC_TIMEOUT_MS = existsSync(PROXY_MAIN_JS) ? 30_000 : 120_000;

const WEB = { name: 'web', ip: '10.96.0.10', port: 80 } as const;
const LATE = { name: 'late', ip: '10.96.0.30', port: 80 } as const;


describeNetns('API datapath: bin/kube-proxy --master against a TestApiServer inside the node namespace (iptables-nft)', () => {
  let node: SimulatedNode | undefined;
  let api: NetnsApiServer | undefined;
  let proxy: RunningProxy | undefined;
  let servers: EchoServer[] = [];
  let dir = '';

  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const a = (): NetnsApiServer => api ?? fail('the API server was not started (see the beforeAll error)');
  const podIp = (i: number): string => n().pods[i - 1]?.ip ?? fail(`no pod${i}`);
  const pod3 = (): string => n().ns.pods[2] ?? fail('no pod3');
  const p = (o: ProbeOptions): Promise<ProbeResult> => probe(n(), pod3(), { stopAfterErrors: 5, ...o });

  const webSlice = (pods: readonly number[]) => endpointSlice({ service: WEB.name, endpoints: pods.map(podIp) });

  async function diagnostics(): Promise<string> {
    const nd = node;
    if (!nd) return '(no topology)';
    const save = await iptablesSave(nd, nd.ns.node, VARIANT, 'nat').catch((e: Error) => `iptables-${VARIANT}-save failed: ${e.message}`);
    return (
      `=== ip netns exec ${nd.ns.node} iptables-${VARIANT}-save -t nat\n${save}\n` +
      `=== API server host stderr\n${api?.stderr().slice(-4000) ?? '(not started)'}\n` +
      `=== proxy log (last 80 lines; full log in ${join(dir, 'proxy.log')})\n${proxy ? proxy.tail(80) : '(proxy not started)'}\n`
    );
  }

  const runner = new CheckRunner({ dir: () => dir, diagnostics, proxy: () => proxy });
  const timings = runner.timings;
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);

  /**
   * Polls TCP probes (`count` tries each) from pod3 until `done` holds, bounded by `timeoutMs`. A check
   * for an endpoint's absence needs many tries per poll: with random balancing over two pods, 4 tries
   * miss a still-programmed pod 1 time in 16.
   */
  async function until(
    what: string,
    target: { ip: string; port: number },
    done: (r: ProbeResult) => boolean,
    timeoutMs: number,
    count = 4,
  ): Promise<void> {
    await pollProbe(what, () => p({ host: target.ip, port: target.port, count, timeoutMs: 300, stopAfterErrors: 1 }), done, timeoutMs);
  }

  beforeAll(() => runner.setup(setup), 90_000);

  async function setup(): Promise<void> {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    const started = Date.now();
    dir = mkdtempSync(join(tmpdir(), 'kp-e2e-api-'));
    await cleanupStaleRuns(TAG);
    node = await createSimulatedNode({ prefix: runPrefix(TAG) });
    servers = await Promise.all(n().pods.map((pd) => startEchoServer(n(), pd.ns, { tcpPorts: [POD_TCP_PORT], maxLifetimeS: 300 })));
    await iptables(n(), n().ns.node, VARIANT, ['-t', 'mangle', '-N', HINT_CHAIN]);
    api = await NetnsApiServer.start(n(), { lifetimeS: 300 });
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(a().url)) fail(`unexpected API server URL ${a().url}`);
    // (1) Objects that exist before the proxy starts.
    await a().create(nodeObject());
    await a().create(service({ name: WEB.name, clusterIP: WEB.ip, port: WEB.port, targetPort: POD_TCP_PORT }));
    await a().create(webSlice([1, 2]));
    timings['setup (netns + echo servers + API server)'] = Date.now() - started;

    const t0 = Date.now();
    proxy = startProxy(
      n(),
      [
        `--master=${a().url}`,
        '--proxy-mode=iptables',
        '--hostname-override=node-1',
        '--cluster-cidr=10.244.0.0/16',
        `--iptables-sync-period=${SYNC_PERIOD_S}s`,
        `--iptables-min-sync-period=${MIN_SYNC_PERIOD_MS / 1000}s`,
        '-v=2',
      ],
      { logFile: join(dir, 'proxy.log') },
    );
    await waitFor(
      'the proxy to program its first sync from the API server',
      async () => {
        if (proxy?.exited()) fail(`kube-proxy exited with ${proxy.exitCode()}:\n${proxy.tail(60)}`);
        const nat = await iptablesSave(n(), n().ns.node, VARIANT, 'nat');
        return nat.includes(`${WEB.ip}/32`) && nat.includes('KUBE-SERVICES') ? true : undefined;
      },
      { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 200 },
    );
    timings['proxy start → first sync'] = Date.now() - t0;
  }

  afterAll(async () => {
    const stop = proxy ? await proxy.stop() : undefined;
    await api?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    console.log(runner.summary(`API datapath e2e timings (ms)`, `\n  proxy stop: ${JSON.stringify(stop)}`));
    if (dir && runner.failures === 0) rmSync(dir, { recursive: true, force: true });
  }, 40_000);

  it('objects created before the proxy starts: pod3 → ClusterIP reaches pod1 and pod2', () =>
    check('initial-objects', async () => {
      const r = await p({ host: WEB.ip, port: WEB.port, count: 60 });
      allOk(r, 'pod3 → web');
      onlyPods(r, ['pod1', 'pod2'], 'pod3 → web');
      hitsAll(r, ['pod1', 'pod2'], 'pod3 → web');
      // The rules went to iptables-nft: the legacy tables carry no service rule.
      const legacy = await iptablesSave(n(), n().ns.node, 'legacy', 'nat').catch(() => '');
      if (legacy.includes(`${WEB.ip}/32`)) fail(`the proxy wrote iptables-legacy too:\n${legacy}`);
    }));

  it(`a service created after start is reachable within minSyncPeriod (${MIN_SYNC_PERIOD_MS} ms) + ${EVENT_SLACK_MS} ms`, () =>
    check('service-added', async () => {
      const before = await p({ host: LATE.ip, port: LATE.port, count: 1, timeoutMs: 300 });
      if (before.ok !== 0) fail(`late answered before it existed: ${describeProbe(before)}`);
      const t0 = Date.now();
      await a().create(service({ name: LATE.name, clusterIP: LATE.ip, port: LATE.port, targetPort: POD_TCP_PORT }));
      await a().create(endpointSlice({ service: LATE.name, endpoints: [podIp(3)] }));
      await until('the late service to answer', LATE, (r) => r.ok === r.count, MIN_SYNC_PERIOD_MS + EVENT_SLACK_MS);
      timings['service-added latency'] = Date.now() - t0;
      const r = await p({ host: LATE.ip, port: LATE.port, count: 10 });
      allOk(r, 'pod3 → late');
      onlyPods(r, ['pod3'], 'pod3 → late');
    }));

  it('an endpoint removed by an EndpointSlice update: traffic only reaches the remaining pod', () =>
    check('endpoint-removed', async () => {
      const t0 = Date.now();
      await a().update(webSlice([2]));
      await until('web to stop sending to pod1', WEB, (r) => r.ok === r.count && !r.byPod['pod1'], MIN_SYNC_PERIOD_MS + EVENT_SLACK_MS, 30);
      timings['endpoint-removed latency'] = Date.now() - t0;
      const r = await p({ host: WEB.ip, port: WEB.port, count: 60 });
      allOk(r, 'pod3 → web after the update');
      onlyPods(r, ['pod2'], 'pod3 → web after pod1 was removed');
    }));

  it('after every watch is cut (dropAllWatches), a later change still reaches the datapath', () =>
    check('watch-drop', async () => {
      const dropped = (await a().dropAllWatches()).result?.['dropped'];
      if (typeof dropped !== 'number' || dropped < 1) fail(`dropAllWatches cut ${String(dropped)} watches; the proxy should have had some open`);
      timings['watches dropped'] = dropped;
      const t0 = Date.now();
      // The change right after the cut: pod1 comes back (and the late service goes away).
      await a().update(webSlice([1, 2]));
      await a().delete(service({ name: LATE.name, clusterIP: LATE.ip }));
      await until('web to send to pod1 again', WEB, (r) => r.ok === r.count && !!r.byPod['pod1'], REWATCH_BOUND_MS);
      timings['watch-drop → change visible'] = Date.now() - t0;
      const r = await p({ host: WEB.ip, port: WEB.port, count: 60 });
      allOk(r, 'pod3 → web after the re-watch');
      onlyPods(r, ['pod1', 'pod2'], 'pod3 → web after the re-watch');
      hitsAll(r, ['pod1', 'pod2'], 'pod3 → web after the re-watch');
      // The deleted service stops answering too (no endpoints rule / no rule: refused or dropped).
      // Same bound, from the change: the Service watch may reconnect later than the EndpointSlice one.
      await until('late to stop answering', LATE, (x) => x.ok === 0, Math.max(1000, REWATCH_BOUND_MS - (Date.now() - t0)));
      timings['watch-drop → delete visible'] = Date.now() - t0;
      const w = await a().activeWatches();
      if (w < 1) fail(`no watch open again after the cut (activeWatches=${w})`);
      timings['active watches after'] = w;
    }));
});

if (!pre.run) {
  it('API datapath e2e skipped (not root or no ip netns)', () => undefined);
}
