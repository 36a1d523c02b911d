/**
 * Real-kernel e2e of the API-server path (issue 4, "in a network namespace with real rules and real
 * traffic"): `bin/kube-proxy --master=http://127.0.0.1:PORT --proxy-mode=iptables` runs inside the node
 * namespace of a simulated node (libs/testing/netns) against a TestApiServer that runs in that same
 * namespace (libs/testing/test-apiserver/src/test-apiserver-host.mjs; the root namespace's loopback is not reachable
 * from there). Objects are created/updated on the API server; real TCP traffic from pod3 checks the
 * rules the proxy programmed with iptables-nft (selected through kubelet's hint chain).
 *
 * Root-only; skipped (loudly) otherwise.
 */
import { describeProbe, iptablesSave, type ProbeResult } from '@kube-proxy/testing-netns';
import { ApiNodeRig, POD_TCP_PORT } from './api-support/api-node-rig.js';
import { endpointSlice, node as nodeObject, service } from './api-support/objects.js';
import { allOk, fail, hitsAll, onlyPods } from './support/probe-assertions.js';
import { CheckRunner } from './support/check-runner.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';

const pre = await e2ePreflight('API datapath');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpad';
/** Long on purpose: changes must show up through watch events + minSyncPeriod, not the periodic resync. */
const SYNC_PERIOD_S = 30;
const MIN_SYNC_PERIOD_MS = 1000;
/** "A few seconds" on top of minSyncPeriod for an event → rules → traffic round trip. */
const EVENT_SLACK_MS = 5000;
/** After the watches are cut the informers must re-watch (or relist) first: allow a reconnect backoff. */
const REWATCH_BOUND_MS = 15_000;

const WEB = { name: 'web', ip: '10.96.0.10', port: 80 } as const;
const LATE = { name: 'late', ip: '10.96.0.30', port: 80 } as const;

describeNetns('API datapath: bin/kube-proxy --master against a TestApiServer inside the node namespace (iptables-nft)', () => {
  let rig: ApiNodeRig | undefined;
  const theRig = (): ApiNodeRig => rig ?? fail('topology was not created (see the beforeAll error)');
  const a = () => theRig().server;
  const podIp = (i: number): string => theRig().podIp(i);
  const p = (o: Parameters<ApiNodeRig['probe']>[0]): Promise<ProbeResult> => theRig().probe(o);
  const until = (what: string, target: { ip: string; port: number }, done: (x: ProbeResult) => boolean, timeoutMs: number, count = 4) =>
    theRig().until(what, target, done, timeoutMs, count);

  const webSlice = (pods: readonly number[]) => endpointSlice({ service: WEB.name, endpoints: pods.map(podIp) });

  const runner = new CheckRunner({ dir: () => rig?.dir ?? '/tmp', diagnostics: async () => (rig ? rig.diagnostics() : '(no topology)'), proxy: () => rig?.proxy });
  const timings = runner.timings;
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);

  beforeAll(
    () =>
      runner.setup(async () => {
        if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
        await ApiNodeRig.start(
          {
            tag: TAG,
            timings,
            // (1) Objects that exist before the proxy starts.
            objects: (x) => [
              nodeObject(),
              service({ name: WEB.name, clusterIP: WEB.ip, port: WEB.port, targetPort: POD_TCP_PORT }),
              endpointSlice({ service: WEB.name, endpoints: [x.podIp(1), x.podIp(2)] }),
            ],
            firstSyncIp: WEB.ip,
            proxyArgs: [`--iptables-sync-period=${SYNC_PERIOD_S}s`, `--iptables-min-sync-period=${MIN_SYNC_PERIOD_MS / 1000}s`, '-v=2'],
          },
          (built) => (rig = built),
        );
      }),
    90_000,
  );

  afterAll(async () => {
    const stop = rig ? await rig.stop(runner.failures > 0) : undefined;
    console.log(runner.summary(`API datapath e2e timings (ms)`, `\n  proxy stop: ${JSON.stringify(stop)}`));
  }, 40_000);

  it('objects created before the proxy starts: pod3 → ClusterIP reaches pod1 and pod2', () =>
    check('initial-objects', async () => {
      const r = await p({ host: WEB.ip, port: WEB.port, count: 60 });
      allOk(r, 'pod3 → web');
      onlyPods(r, ['pod1', 'pod2'], 'pod3 → web');
      hitsAll(r, ['pod1', 'pod2'], 'pod3 → web');
      // The rules went to iptables-nft: the legacy tables carry no service rule.
      const legacy = await iptablesSave(theRig().node, theRig().node.ns.node, 'legacy', 'nat').catch(() => '');
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
