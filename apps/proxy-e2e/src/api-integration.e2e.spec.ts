/**
 * API-integration e2e (dry-run flavour): `bin/kube-proxy --master=<TestApiServer> --dry-run` as a
 * real process, informers against a real HTTP server, and the would-be iptables state it prints after
 * every sync. No root, no namespaces: unlike the real-kernel suites this part never skips.
 *
 * What it checks: initial state, latency of a new Service, endpoint add/remove/terminating, the
 * service-proxy-name/headless filters, and recovery from API faults (dropped watches, a 10 s outage,
 * 410 Gone after compaction with a delete missed while disconnected), each fault test ending with
 * "the state equals what a fresh proxy prints on its first sync".
 *
 * The Starting event of a proxy that is not dry-run is checked at the end, with a real proxy inside a
 * network namespace (it programs iptables there): that part needs root (CI runs as root) and is
 * skipped, loudly, otherwise.
 *
 * Run (after `npx nx build proxy`), from apps/proxy-e2e:
 *   node --experimental-vm-modules --no-warnings=ExperimentalWarning ../../node_modules/jest/bin/jest.js \
 *     -c jest.e2e.config.cjs src/api-integration
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanupStaleRuns, createSimulatedNode, iptables, iptablesSave, runPrefix, waitFor, type SimulatedNode } from '@kube-proxy/testing-netns';
import { TestApiServer, waitUntil, type KubeObject } from '@kube-proxy/testing-apiserver';
import { NetnsApiServer } from './api-support/netns-api-server.js';
import { e2ePreflight } from './support/preflight.js';
import { startProxy as startNetnsProxy, type RunningProxy } from './support/proxy.js';
import { DryRunProxy, MIN_SYNC_PERIOD_MS, assertBuilt, dryRunArgs, runOnce, stopAllProxies } from './api-support/dry-run-proxy.js';
import { HEADLESS_LABEL, SERVICE_PROXY_NAME_LABEL, endpointSlice, node, service, serviceWithEndpoints, terminating, type Ep } from './api-support/objects.js';
import {
  chainDeclared,
  diffStates,
  linesAbout,
  ruleText,
  serviceChain,
  serviceEndpoints,
  serviceTargets,
  type SyncBlock,
} from './api-support/sync-output.js';

/** A change on a healthy connection shows up well within this (the latency test is much stricter). */
const CHANGE_MS = 5_000;
/** A dropped watch is re-established after the informer's first backoff step (1 s + 10 % jitter). */
const RECONNECT_MS = 8_000;

let server: TestApiServer | undefined;

/** Ends every proxy still running and the server: after each test that starts its own, and at the end. */
async function cleanUp(): Promise<void> {
  await stopAllProxies();
  await server?.close();
  server = undefined;
}

beforeAll(() => assertBuilt());
afterAll(cleanUp, 30_000);

async function startServer(objects: readonly KubeObject[]): Promise<TestApiServer> {
  const s = await TestApiServer.start();
  server = s;
  s.create(node());
  for (const o of objects) s.create(o);
  return s;
}

function startProxy(srv: TestApiServer, name: string, extra: readonly string[] = []): DryRunProxy {
  return DryRunProxy.start(name, dryRunArgs(srv.url, extra));
}

/** All three informers (Services, EndpointSlices, Node) have their watch open. */
async function watchesUp(srv: TestApiServer): Promise<void> {
  // Services, EndpointSlices, its Node, and ServiceCIDRs (networking.k8s.io/v1, as upstream since 1.33).
  await waitUntil(() => srv.activeWatches() >= 4, { timeoutMs: 5000, what: 'the proxy to open its 4 watches' });
}

function sorted(xs: readonly string[] | undefined): string[] | undefined {
  return xs === undefined ? undefined : [...xs].sort();
}

/** `servicePort` load-balances to exactly `endpoints` (ip:port, any order). */
function balancesTo(servicePort: string, endpoints: readonly string[]): (b: SyncBlock) => boolean {
  const want = JSON.stringify([...endpoints].sort());
  return (b) => JSON.stringify(sorted(serviceEndpoints(b, servicePort))) === want;
}

/** Nothing in the state mentions `servicePort` (no KUBE-SERVICES/SVC/SEP rule, no REJECT). */
function absent(servicePort: string): (b: SyncBlock) => boolean {
  return (b) => linesAbout(b, servicePort).length === 0;
}

function all(...preds: ((b: SyncBlock) => boolean)[]): (b: SyncBlock) => boolean {
  return (b) => preds.every((p) => p(b));
}

/**
 * "Nothing programmed twice wrongly": the long-running proxy's state equals what a fresh proxy prints
 * on its first sync against the same server (rule lines; the `# sync` header is not compared).
 */
async function expectSameAsFreshProxy(srv: TestApiServer, proxy: DryRunProxy): Promise<void> {
  const current = proxy.latest();
  if (!current) throw new Error(`${proxy.name}: no sync yet`);
  const { block: fresh } = await runOnce(`${proxy.name} / fresh --once`, dryRunArgs(srv.url));
  expect(fresh.kind).toBe('full');
  if (ruleText(current) !== ruleText(fresh)) {
    throw new Error(
      `${proxy.name}: its state (sync #${current.seq} ${current.kind}) differs from a fresh proxy's first sync:\n` +
        diffStates(current, fresh, [`long-running #${current.seq}`, 'fresh --once']),
    );
  }
  // And the long-running proxy did not resync into something else meanwhile.
  expect(proxy.latest()).toBe(current);
}

describe('kube-proxy --dry-run against the test API server', () => {
  // One proxy process for its first sync and the changes made while it runs (a process start costs
  // ~2.5 s: Node, host detection, the Node wait's first 1 s poll).
  describe('one running proxy', () => {
    let srv: TestApiServer;
    let proxy: DryRunProxy;

    beforeAll(async () => {
      srv = await startServer(serviceWithEndpoints({ name: 'web', clusterIP: '10.96.0.10', endpoints: ['10.244.1.11', '10.244.1.12'] }));
      proxy = startProxy(srv, 'running proxy');
    });
    afterAll(cleanUp, 30_000);

    it('programs a Service that exists before start on its first sync; no Starting event in dry-run', async () => {
      const first = await proxy.firstSync();

      expect([first.seq, first.kind]).toEqual([1, 'full']);
      const chain = serviceChain(first, 'default/web:http');
      expect(chain).toMatch(/^KUBE-SVC-[A-Z0-9]{16}$/);
      expect(chainDeclared(first, 'nat', chain!)).toBe(true);
      expect(serviceTargets(first, chain!)).toEqual([
        { endpoint: '10.244.1.11:8080', probability: 0.5, sep: expect.stringMatching(/^KUBE-SEP-/) },
        { endpoint: '10.244.1.12:8080', sep: expect.stringMatching(/^KUBE-SEP-/) },
      ]);
      // The Node came from the API: its InternalIP is the proxy's node IP.
      expect(proxy.stderr()).toContain('nodeIPs={"IPv4":"192.168.50.1"}');
      expect(proxy.strayStdout()).toEqual([]);

      // The Starting event is a write to the cluster: a dry run must not post it, nor write anything
      // else. It would be posted right at start, before the first sync; the short wait only covers
      // a request still in flight.
      await new Promise((r) => setTimeout(r, 300));
      expect(srv.events()).toEqual([]);
      expect(srv.requestsWhere((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`)).toEqual([]);
      expect(proxy.alive()).toBe(true);
    });

    // The Starting event of a proxy that is not dry-run: see the last describe of this file.

    it('programs a Service created after start within minSyncPeriod + 1 s', async () => {
      await proxy.firstSync();
      await watchesUp(srv);

      const createdAt = Date.now();
      for (const o of serviceWithEndpoints({ name: 'late', clusterIP: '10.96.0.20', endpoints: ['10.244.1.21'] })) srv.create(o);
      const b = await proxy.waitForState(balancesTo('default/late:http', ['10.244.1.21:8080']), CHANGE_MS, 'the late Service');
      const latencyMs = b.receivedAt - createdAt;
      expect({ latencyMs, within: latencyMs <= MIN_SYNC_PERIOD_MS + 1000 }).toEqual({ latencyMs, within: true });
      // The service that was there before is untouched.
      expect(sorted(serviceEndpoints(b, 'default/web:http'))).toEqual(['10.244.1.11:8080', '10.244.1.12:8080']);
    });

    it('reflects endpoints added, removed and terminating', async () => {
      const svc = 'default/eps:http';
      const slice = (endpoints: readonly (string | Ep)[]): KubeObject => endpointSlice({ service: 'eps', endpoints });
      await proxy.firstSync();
      srv.create(service({ name: 'eps', clusterIP: '10.96.0.30' }));
      srv.create(slice(['10.244.1.11']));
      let b = await proxy.waitForState(balancesTo(svc, ['10.244.1.11:8080']), CHANGE_MS, 'one endpoint');
      expect(serviceTargets(b, serviceChain(b, svc)!)).toEqual([{ endpoint: '10.244.1.11:8080', sep: expect.any(String) }]);

      // Added.
      srv.update(slice(['10.244.1.11', '10.244.1.12', '10.244.1.13']));
      b = await proxy.waitForState(balancesTo(svc, ['10.244.1.11:8080', '10.244.1.12:8080', '10.244.1.13:8080']), CHANGE_MS, 'three endpoints');
      expect(serviceTargets(b, serviceChain(b, svc)!).map((t) => t.probability)).toEqual([0.3333333333, 0.5, undefined]);
      const sepOf12 = serviceTargets(b, serviceChain(b, svc)!).find((t) => t.endpoint === '10.244.1.12:8080')!.sep;

      // Removed: out of the load balancing, and its SEP chain is gone.
      srv.update(slice(['10.244.1.11', '10.244.1.13']));
      b = await proxy.waitForState(balancesTo(svc, ['10.244.1.11:8080', '10.244.1.13:8080']), CHANGE_MS, '10.244.1.12 removed');
      expect(b.lines.filter((l) => l.includes(sepOf12))).toEqual([]);

      // Terminating (not ready, still serving) while another endpoint is ready: it leaves the
      // probability rules; the ready one takes all new connections.
      srv.update(slice(['10.244.1.11', terminating('10.244.1.13')]));
      b = await proxy.waitForState(balancesTo(svc, ['10.244.1.11:8080']), CHANGE_MS, '10.244.1.13 terminating');
      expect(serviceTargets(b, serviceChain(b, svc)!)).toEqual([{ endpoint: '10.244.1.11:8080', sep: expect.any(String) }]);

      // All terminating but serving: upstream falls back to the serving-terminating endpoints (KEP-1669).
      srv.update(slice([terminating('10.244.1.11'), terminating('10.244.1.13')]));
      await proxy.waitForState(balancesTo(svc, ['10.244.1.11:8080', '10.244.1.13:8080']), CHANGE_MS, 'fallback to serving-terminating endpoints');

      // Not serving at all: no endpoint left (the service gets a REJECT rule in the filter table).
      srv.update(slice([{ ip: '10.244.1.11', ready: false, serving: false, terminating: true }]));
      b = await proxy.waitForState((s) => serviceChain(s, svc) === undefined, CHANGE_MS, 'no usable endpoint');
      expect(b.lines.some((l) => l.includes(`"${svc} has no endpoints"`) && l.endsWith('-j REJECT'))).toBe(true);
      // The other services are untouched.
      expect(serviceEndpoints(b, 'default/late:http')).toEqual(['10.244.1.21:8080']);
      expect(proxy.alive()).toBe(true);
    });

    it('ignores Services labelled for another proxy or headless; --service-proxy-name=other serves only its own', async () => {
      await proxy.firstSync();
      await watchesUp(srv);
      for (const o of [
        ...serviceWithEndpoints({ name: 'other', clusterIP: '10.96.0.31', endpoints: ['10.244.1.31'], labels: { [SERVICE_PROXY_NAME_LABEL]: 'other' } }),
        // A real cluster IP: only the label excludes it (a clusterIP None would be filtered anyway).
        ...serviceWithEndpoints({ name: 'headless', clusterIP: '10.96.0.32', endpoints: ['10.244.1.32'], labels: { [HEADLESS_LABEL]: '' } }),
        // Created last: once it is programmed, the proxy has seen everything created before it.
        ...serviceWithEndpoints({ name: 'plain', clusterIP: '10.96.0.33', endpoints: ['10.244.1.33'] }),
      ])
        srv.create(o);
      const b = await proxy.waitForState(balancesTo('default/plain:http', ['10.244.1.33:8080']), CHANGE_MS, 'the unlabelled Service');
      expect(linesAbout(b, 'default/other:http')).toEqual([]);
      expect(linesAbout(b, 'default/headless:http')).toEqual([]);

      const { block: named } = await runOnce('--service-proxy-name=other', dryRunArgs(srv.url, ['--service-proxy-name=other']));
      expect(serviceEndpoints(named, 'default/other:http')).toEqual(['10.244.1.31:8080']);
      for (const unlabelled of ['default/web:http', 'default/plain:http', 'default/headless:http']) {
        expect([unlabelled, linesAbout(named, unlabelled)]).toEqual([unlabelled, []]);
      }

      // A Service that gets the label at runtime leaves this proxy (the watch reports it as DELETED).
      const [plain, plainSlice] = serviceWithEndpoints({ name: 'plain', clusterIP: '10.96.0.33', endpoints: ['10.244.1.33'], labels: { [SERVICE_PROXY_NAME_LABEL]: 'other' } });
      srv.update(plain!);
      srv.update(plainSlice!);
      await proxy.waitForState(absent('default/plain:http'), CHANGE_MS, 'plain leaving after relabelling');
      expect(proxy.alive()).toBe(true);
    });
  });

  // A fresh proxy per fault: the informers' backoff escalates with consecutive failures.
  describe('API faults', () => {
    afterEach(cleanUp, 30_000);

    it('recovers from dropped watches: a change made after the drop is reflected', async () => {
      const srv = await startServer(serviceWithEndpoints({ name: 'web', clusterIP: '10.96.0.10', endpoints: ['10.244.1.11'] }));
      const proxy = startProxy(srv, 'dropped watches');
      await proxy.firstSync();
      await watchesUp(srv);

      expect(srv.dropAllWatches()).toBe(4);
      for (const o of serviceWithEndpoints({ name: 'after-drop', clusterIP: '10.96.0.40', endpoints: ['10.244.1.41'] })) srv.create(o);
      srv.update(endpointSlice({ service: 'web', endpoints: ['10.244.1.11', '10.244.1.12'] }));

      await proxy.waitForState(
        all(balancesTo('default/after-drop:http', ['10.244.1.41:8080']), balancesTo('default/web:http', ['10.244.1.11:8080', '10.244.1.12:8080'])),
        RECONNECT_MS,
        'the changes made after the drop',
      );
      expect(proxy.alive()).toBe(true);
      await expectSameAsFreshProxy(srv, proxy);
    });

    it('survives a 10 s outage (connections refused): the change made meanwhile is reflected after it', async () => {
      const srv = await startServer(serviceWithEndpoints({ name: 'web', clusterIP: '10.96.0.10', endpoints: ['10.244.1.11'] }));
      const proxy = startProxy(srv, 'outage');
      await proxy.firstSync();
      await watchesUp(srv);
      const syncsBefore = proxy.blocks.length;

      const outageMs = 10_000;
      srv.refuseConnections(outageMs);
      const outageEnds = Date.now() + outageMs;
      for (const o of serviceWithEndpoints({ name: 'during-outage', clusterIP: '10.96.0.50', endpoints: ['10.244.1.51'] })) srv.create(o);
      srv.update(endpointSlice({ service: 'web', endpoints: ['10.244.1.12'] }));

      // Reconnect attempts back off 1, 2, 4, 8 s (+10 % jitter): the first one after the outage
      // lands ~15–16.5 s after it began.
      const b = await proxy.waitForState(
        all(balancesTo('default/during-outage:http', ['10.244.1.51:8080']), balancesTo('default/web:http', ['10.244.1.12:8080'])),
        outageMs + 15_000,
        'the changes made during the outage',
      );
      expect(b.receivedAt).toBeGreaterThanOrEqual(outageEnds);
      // Nothing was synced while the server was away (after it, the informers catch up one by one,
      // so an intermediate sync with only some of the changes is fine).
      expect(proxy.blocks.slice(syncsBefore).filter((x) => x.receivedAt < outageEnds).map((x) => x.seq)).toEqual([]);
      expect(proxy.alive()).toBe(true);
      expect(proxy.stderr()).toMatch(/Informer list\/watch failed; retrying/);
      expect(proxy.stderr()).toMatch(/Informer reconnected/);
      await expectSameAsFreshProxy(srv, proxy);
    }, 60_000);

    it('relists after 410 Gone (compaction while disconnected), dropping a Service deleted meanwhile', async () => {
      const srv = await startServer([
        ...serviceWithEndpoints({ name: 'web', clusterIP: '10.96.0.10', endpoints: ['10.244.1.11'] }),
        ...serviceWithEndpoints({ name: 'doomed', clusterIP: '10.96.0.60', endpoints: ['10.244.1.61', '10.244.1.62'] }),
      ]);
      const proxy = startProxy(srv, 'compaction');
      const first = await proxy.firstSync();
      await watchesUp(srv);
      const doomedSvc = serviceChain(first, 'default/doomed:http')!;
      const doomedChains = [doomedSvc, ...serviceTargets(first, doomedSvc).map((t) => t.sep)];
      expect(doomedChains).toHaveLength(3);

      // All of this happens synchronously, while the watches are down (the informers wait at least
      // 1 s before reconnecting), so the proxy hears of none of it through a watch.
      srv.dropAllWatches();
      const [doomed, doomedSlice] = serviceWithEndpoints({ name: 'doomed', clusterIP: '10.96.0.60', endpoints: [] });
      srv.delete(doomedSlice!);
      srv.delete(doomed!);
      for (const o of serviceWithEndpoints({ name: 'newcomer', clusterIP: '10.96.0.70', endpoints: ['10.244.1.71'] })) srv.create(o);
      srv.update(endpointSlice({ service: 'web', endpoints: ['10.244.1.11', '10.244.1.12'] }));
      srv.compact();
      const compactedAt = Date.now();
      const compactedRv = Number(srv.resourceVersion());

      const b = await proxy.waitForState(
        all(absent('default/doomed:http'), balancesTo('default/newcomer:http', ['10.244.1.71:8080']), balancesTo('default/web:http', ['10.244.1.11:8080', '10.244.1.12:8080'])),
        RECONNECT_MS,
        'the state after the relist',
      );
      for (const chain of doomedChains) expect([chain, b.lines.filter((l) => l.includes(chain))]).toEqual([chain, []]);

      // It did go through 410 and a relist: a watch from a compacted RV, then a fresh list.
      const since = srv.requestsWhere((r) => r.at >= compactedAt && r.path === '/api/v1/services');
      const goneWatch = since.findIndex((r) => r.query['watch'] === 'true' && Number(r.query['resourceVersion']) < compactedRv);
      expect(goneWatch).toBeGreaterThanOrEqual(0);
      expect(since.slice(goneWatch + 1).some((r) => r.query['watch'] === undefined)).toBe(true);
      expect(proxy.alive()).toBe(true);
      await expectSameAsFreshProxy(srv, proxy);
    });
  });
});

const pre = await e2ePreflight('API integration: Starting event (not dry-run)');
const describeNetns = pre.run ? describe : describe.skip;

describeNetns('kube-proxy without --dry-run against the test API server (real proxy in a network namespace)', () => {
  const TAG = 'kpsev';
  let simNode: SimulatedNode | undefined;
  let api: NetnsApiServer | undefined;
  let proxy: RunningProxy | undefined;
  let dir = '';

  afterAll(async () => {
    await proxy?.stop();
    await api?.stop();
    await simNode?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 40_000);

  it("posts the Starting event exactly once, with upstream's birthCry fields, when not in dry-run", async () => {
    dir = mkdtempSync(join(tmpdir(), 'kp-e2e-starting-'));
    await cleanupStaleRuns(TAG);
    simNode = await createSimulatedNode({ prefix: runPrefix(TAG), podCount: 1 });
    const nd = simNode;
    await iptables(nd, nd.ns.node, 'nft', ['-t', 'mangle', '-N', 'KUBE-IPTABLES-HINT']);
    api = await NetnsApiServer.start(nd, { lifetimeS: 120 });
    const srv = api;
    await srv.create(node());
    for (const o of serviceWithEndpoints({ name: 'web', clusterIP: '10.96.0.10', endpoints: ['10.244.1.11'] })) await srv.create(o);

    const startedAt = Date.now();
    proxy = startNetnsProxy(
      nd,
      [`--master=${srv.url}`, '--proxy-mode=iptables', '--hostname-override=node-1', '--cluster-cidr=10.244.0.0/16', '-v=2'],
      { logFile: join(dir, 'proxy.log') },
    );
    const p = proxy;
    await waitFor(
      'the proxy (not dry-run) to program its first sync',
      async () => {
        if (p.exited()) throw new Error(`kube-proxy exited with ${p.exitCode()}:\n${p.tail(60)}`);
        const nat = await iptablesSave(nd, nd.ns.node, 'nft', 'nat');
        return nat.includes('10.96.0.10/32') ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );

    // Posted at start (before the first sync); a restarted watch must not post it again.
    const starting = async (): Promise<KubeObject[]> => (await srv.events()).filter((e) => (e as { reason?: unknown }).reason === 'Starting');
    await waitFor('the Starting event', async () => ((await starting()).length > 0 ? true : undefined), { timeoutMs: 5000, intervalMs: 100 });
    const dropped = (await srv.dropAllWatches()).result?.['dropped'];
    expect(dropped).toBeGreaterThanOrEqual(3);
    await waitFor('the proxy to re-open its 3 watches', async () => ((await srv.activeWatches()) >= 3 ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 200,
    });
    await new Promise((r) => setTimeout(r, 500));

    // (Warning events about host setup the namespace does not allow, e.g. nf_conntrack_max, may come too.)
    const events = await starting();
    expect(events).toHaveLength(1);
    const ev = events[0] as Record<string, unknown> & { metadata: Record<string, unknown> };
    // client-go's events.k8s.io/v1 recorder for Recorder.Eventf(nodeRef, nil, Normal, "Starting", "StartKubeProxy", "").
    expect(ev).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: 'default' },
      type: 'Normal',
      reason: 'Starting',
      action: 'StartKubeProxy',
      reportingController: 'kube-proxy',
      reportingInstance: `kube-proxy-${hostname()}`,
      regarding: { kind: 'Node', name: 'node-1', uid: 'node-1' },
    });
    expect(ev['note']).toBeUndefined();
    expect(ev['related']).toBeUndefined();
    expect(ev['series']).toBeUndefined();
    expect((ev['regarding'] as Record<string, unknown>)['namespace'] ?? '').toBe('');
    const name = /^node-1\.([0-9a-f]+)$/.exec(String(ev.metadata['name']));
    expect(name).not.toBeNull();
    const eventTime = String(ev['eventTime']);
    expect(eventTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const at = Date.parse(eventTime);
    expect(at).toBeGreaterThanOrEqual(startedAt - 1000);
    expect(at).toBeLessThanOrEqual(Date.now());
    // The name's hex is the event time in Unix nanoseconds (client-go: name.%x of t.UnixNano()).
    expect(Number(BigInt(`0x${name![1]}`) / 1_000_000n)).toBe(at);

    // Nothing but event POSTs was written, one per stored event (no retried or duplicate Starting post),
    // and the KubeProxyReady Node condition (README, "Readiness signal"): one status PATCH after the first sync.
    const writes = (await srv.requestsSince(startedAt)).filter((r) => r.method !== 'GET');
    const posts = writes.filter((r) => r.method === 'POST');
    expect(new Set(posts.map((r) => `${r.method} ${r.path}`))).toEqual(new Set(['POST /apis/events.k8s.io/v1/namespaces/default/events']));
    expect(posts).toHaveLength((await srv.events()).length);
    expect(writes.filter((r) => r.method !== 'POST').map((r) => `${r.method} ${r.path}`)).toEqual(['PATCH /api/v1/nodes/node-1/status']);
  }, 120_000);
});
