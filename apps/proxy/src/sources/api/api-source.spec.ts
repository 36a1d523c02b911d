import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import { nullLogger, type Logger } from '@kube-proxy/core';
import { TestApiServer, waitUntil, type KubeObject } from '@kube-proxy/testing-apiserver';
import type { ManifestHandlers } from '../manifests/manifest-source.js';
import { ApiSource, NodeWaitError, type ApiSourceOptions } from './api-source.js';
import { createKubeClient } from './kube-client.js';

// Integration tests: ApiSource (client-node ListWatch underneath) against a real HTTP fake API server.

type Obj = V1Service | V1EndpointSlice | V1Node;

function recorder() {
  const events: string[] = [];
  const updates: Array<{ kind: string; previous: Obj; current: Obj }> = [];
  const name = (o: Obj) => `${o.metadata?.namespace ? o.metadata.namespace + '/' : ''}${o.metadata?.name}`;
  const handlers: ManifestHandlers = {
    services: {
      onServiceAdd: (s) => void events.push(`svc+ ${name(s)}`),
      onServiceUpdate: (a, b) => {
        events.push(`svc~ ${name(b)}`);
        updates.push({ kind: 'Service', previous: a, current: b });
      },
      onServiceDelete: (s) => void events.push(`svc- ${name(s)}`),
      onServicesSynced: () => void events.push('svc synced'),
    },
    endpointSlices: {
      onEndpointSliceAdd: (s) => void events.push(`eps+ ${name(s)}`),
      onEndpointSliceUpdate: (a, b) => {
        events.push(`eps~ ${name(b)}`);
        updates.push({ kind: 'EndpointSlice', previous: a, current: b });
      },
      onEndpointSliceDelete: (s) => void events.push(`eps- ${name(s)}`),
      onEndpointSlicesSynced: () => void events.push('eps synced'),
    },
    node: {
      onNodeAdd: (n) => void events.push(`node+ ${name(n)}`),
      onNodeUpdate: (a, b) => {
        events.push(`node~ ${name(b)}`);
        updates.push({ kind: 'Node', previous: a, current: b });
      },
      onNodeDelete: (n) => void events.push(`node- ${name(n)}`),
      onNodeSynced: () => void events.push('node synced'),
    },
  };
  return { events, updates, handlers };
}

const service = (name: string, opts: { ns?: string; ip?: string; labels?: Record<string, string>; port?: number } = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: opts.ns ?? 'default', labels: opts.labels ?? {} },
  spec: { clusterIP: opts.ip ?? '10.96.0.10', ports: [{ port: opts.port ?? 80, protocol: 'TCP' }] },
});

const slice = (name: string, svcName: string, ip: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': svcName, ...labels } },
  addressType: 'IPv4',
  endpoints: [{ addresses: [ip], conditions: { ready: true } }],
  ports: [{ port: 8080, protocol: 'TCP' }],
});

const nodeObj = (name: string, podCIDRs?: string[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: podCIDRs ? { podCIDRs } : {},
  status: { addresses: [{ type: 'InternalIP', address: '192.168.1.10' }] },
});

describe('ApiSource against the test API server', () => {
  let server: TestApiServer;
  const sources: ApiSource[] = [];
  const warnings: string[] = [];
  const logger: Logger = { ...nullLogger, warn: (m) => void warnings.push(m), child: () => logger };

  beforeEach(async () => {
    server = await TestApiServer.start();
    warnings.length = 0;
  });
  afterEach(async () => {
    for (const s of sources.splice(0)) s.stop();
    await server.close();
  });

  function newSource(extra: Partial<ApiSourceOptions> = {}): ApiSource {
    const client = createKubeClient({
      master: server.url,
      clientConnection: { qps: -1, burst: 0, contentType: 'application/json', acceptContentTypes: '' },
      logger,
    });
    const source = new ApiSource({
      client,
      nodeName: 'node-1',
      serviceProxyName: '',
      logger,
      configSyncPeriodMs: 0,
      waitForPodCIDR: false,
      nodeWaitTimeoutMs: 2000,
      nodePollIntervalMs: 10,
      backoff: { initialMs: 50, maxMs: 400, resetAfterMs: 10_000 },
      ...extra,
    });
    sources.push(source);
    return source;
  }

  async function started(extra: Partial<ApiSourceOptions> = {}) {
    const s = newSource(extra);
    const r = recorder();
    await s.loadInitial();
    s.start(r.handlers);
    await waitUntil(() => r.events.includes('svc synced') && r.events.includes('eps synced') && r.events.includes('node synced'), { what: 'synced' });
    await waitUntil(() => server.activeWatches() === 3, { what: '3 watches' });
    return { s, r };
  }

  const listRequests = (path: string) => server.requestsWhere((q) => q.path === path && q.method === 'GET' && q.query.watch === undefined);

  it('delivers the initial lists as adds, then one synced per kind; the node and the Starting event', async () => {
    server.create(nodeObj('node-1'));
    server.create(nodeObj('node-2'));
    server.create(service('web'));
    server.create(service('api', { ns: 'prod', ip: '10.96.0.11' }));
    server.create(slice('web-abc', 'web', '10.244.0.5'));
    const { s, r } = await started();

    expect(s.node()?.metadata?.name).toBe('node-1');
    // Listed objects get the type meta the List carries, like watched ones have.
    expect(s.node()).toMatchObject({ apiVersion: 'v1', kind: 'Node' });
    expect(r.events.filter((e) => e.startsWith('svc'))).toEqual(['svc+ default/web', 'svc+ prod/api', 'svc synced']);
    expect(r.events.filter((e) => e.startsWith('eps'))).toEqual(['eps+ default/web-abc', 'eps synced']);
    expect(r.events.filter((e) => e.startsWith('node'))).toEqual(['node+ node-1', 'node synced']);
    expect(s.counts()).toEqual({ Service: 2, EndpointSlice: 1, Node: 1 });
    await waitUntil(() => server.events().length === 1, { what: 'Starting event' });
    expect(server.events()[0]).toMatchObject({ reason: 'Starting', regarding: { kind: 'Node', name: 'node-1' }, reportingController: 'kube-proxy' });
    expect(s.isHealthy()).toBe(true);
    expect(s.lastSuccessfulContact()).toBeGreaterThan(Date.now() - 5000);

    // The selectors upstream uses, and watches that ask for bookmarks and a server-side timeout.
    const svcList = listRequests('/api/v1/services')[0];
    expect(svcList.query).toEqual({ labelSelector: '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless', fieldSelector: 'spec.clusterIP!=None' });
    expect(listRequests('/api/v1/nodes')[0].query).toEqual({ fieldSelector: 'metadata.name=node-1' });
    const nodeWatch = server.requestsWhere((q) => q.path === '/api/v1/nodes' && q.query.watch === 'true')[0];
    expect(nodeWatch.query).toMatchObject({ fieldSelector: 'metadata.name=node-1', allowWatchBookmarks: 'true' });
    expect(Number(nodeWatch.query.timeoutSeconds)).toBeGreaterThanOrEqual(300);
    expect(Number(nodeWatch.query.resourceVersion)).toBeGreaterThan(0);
  });

  it('lists Services and EndpointSlices during loadInitial and delivers them once start() attaches the handlers', async () => {
    server.create(nodeObj('node-1'));
    server.create(service('web'));
    server.create(slice('web-abc', 'web', '10.244.0.5'));
    const s = newSource();
    await s.loadInitial();
    // The lists overlap the caller's setup between loadInitial and start.
    await waitUntil(() => s.counts().Service === 1 && s.counts().EndpointSlice === 1, { what: 'lists before start' });
    expect(listRequests('/api/v1/services')).toHaveLength(1);
    const r = recorder();
    s.start(r.handlers);
    await waitUntil(() => r.events.includes('svc synced') && r.events.includes('eps synced'), { what: 'synced' });
    expect(r.events.filter((e) => e.startsWith('svc') || e.startsWith('eps'))).toEqual(['svc+ default/web', 'svc synced', 'eps+ default/web-abc', 'eps synced']);
    // start() lists nothing again.
    expect(listRequests('/api/v1/services')).toHaveLength(1);
    expect(listRequests('/apis/discovery.k8s.io/v1/endpointslices')).toHaveLength(1);
  });

  it('delivers create, update (with previous and current) and delete', async () => {
    server.create(nodeObj('node-1'));
    const { r } = await started();
    r.events.length = 0;
    server.create(service('web'));
    server.update(service('web', { port: 81 }));
    server.create(slice('web-1', 'web', '10.244.0.5'));
    server.update(slice('web-1', 'web', '10.244.0.6'));
    server.update({ ...nodeObj('node-1'), metadata: { name: 'node-1', labels: { zone: 'a' } } });
    server.delete(service('web'));
    server.delete(slice('web-1', 'web', ''));
    await waitUntil(() => r.events.length >= 7, { what: '7 events' });
    expect(r.events.filter((e) => e.startsWith('svc'))).toEqual(['svc+ default/web', 'svc~ default/web', 'svc- default/web']);
    expect(r.events.filter((e) => e.startsWith('eps'))).toEqual(['eps+ default/web-1', 'eps~ default/web-1', 'eps- default/web-1']);
    expect(r.events.filter((e) => e.startsWith('node'))).toEqual(['node~ node-1']);
    const svcUpdate = r.updates.find((u) => u.kind === 'Service')!;
    expect((svcUpdate.previous as V1Service).spec?.ports?.[0].port).toBe(80);
    expect((svcUpdate.current as V1Service).spec?.ports?.[0].port).toBe(81);
    const epsUpdate = r.updates.find((u) => u.kind === 'EndpointSlice')!;
    expect((epsUpdate.previous as V1EndpointSlice).endpoints[0].addresses).toEqual(['10.244.0.5']);
    expect((epsUpdate.current as V1EndpointSlice).endpoints[0].addresses).toEqual(['10.244.0.6']);
    expect(r.events).not.toContain('svc synced');
  });

  it('loses no change when the watches are dropped: it re-watches from the last resourceVersion', async () => {
    server.create(nodeObj('node-1'));
    server.create(service('a'));
    const { r } = await started();
    r.events.length = 0;
    const listsBefore = listRequests('/api/v1/services').length;
    expect(server.dropAllWatches()).toBe(3);
    // Changes while no watch is open.
    server.create(service('b'));
    server.update(service('a', { port: 90 }));
    server.delete(service('a'));
    await waitUntil(() => r.events.length >= 3, { what: 'the missed changes' });
    expect(r.events).toEqual(['svc+ default/b', 'svc~ default/a', 'svc- default/a']);
    await waitUntil(() => server.activeWatches() === 3, { what: 'watches back' });
    // Resumed, not relisted.
    expect(listRequests('/api/v1/services').length).toBe(listsBefore);
  });

  it('rides out an API server refusing connections for 3 s, backing off, then catches up', async () => {
    server.create(nodeObj('node-1'));
    server.create(service('a'));
    const { s, r } = await started({ unhealthyAfterMs: 1000 });
    r.events.length = 0;
    const contactBefore = s.lastSuccessfulContact()!;
    const requestsBefore = server.requests.length;
    server.refuseConnections(3000);
    const outageStart = Date.now();
    server.create(service('b'));
    server.update(service('a', { port: 99 }));
    await waitUntil(() => !s.isHealthy(), { what: 'unhealthy', timeoutMs: 3000 });
    expect(s.health().every((h) => h.state === 'backoff' || h.state === 'connecting' || h.state === 'listing')).toBe(true);
    await waitUntil(() => r.events.length >= 2, { what: 'catch-up', timeoutMs: 8000 });
    expect(Date.now() - outageStart).toBeGreaterThanOrEqual(2900);
    expect(r.events).toEqual(['svc+ default/b', 'svc~ default/a']);
    await waitUntil(() => s.isHealthy(), { what: 'healthy again' });
    expect(s.lastSuccessfulContact()!).toBeGreaterThan(contactBefore);
    // Backoff (50 ms doubling to 400 ms) bounds the attempts: 3 informers × ~10 tries, not a hot loop.
    const attempts = server.requests.length - requestsBefore;
    expect(attempts).toBeLessThan(60);
    expect(warnings.filter((w) => w.startsWith('Informer list/watch failed')).length).toBeGreaterThanOrEqual(3);
  }, 15_000);

  it('aborts a watch that stays silent past its timeout (half-open connection) and reconnects', async () => {
    server.create(nodeObj('node-1'));
    const { s, r } = await started({ watchTimeoutSeconds: () => 1, watchStallGraceMs: 200 });
    r.events.length = 0;
    server.stallWatches();
    server.create(service('during-stall'));
    await waitUntil(() => s.health().some((h) => h.lastError?.includes('watch received nothing')), { what: 'stall detected', timeoutMs: 4000 });
    server.clearFaults();
    await waitUntil(() => r.events.includes('svc+ default/during-stall'), { what: 'delivery after reconnect', timeoutMs: 4000 });
  }, 10_000);

  it('after a 410 Gone, relists and delivers the deletes of objects removed meanwhile', async () => {
    server.create(nodeObj('node-1'));
    server.create(service('stays'));
    server.create(service('goes'));
    server.create(slice('goes-1', 'goes', '10.244.0.9'));
    const { r } = await started();
    r.events.length = 0;
    // Keep the informers away while history is lost, so they come back with an expired RV.
    server.refuseConnections(300);
    server.delete(service('goes'));
    server.delete(slice('goes-1', 'goes', ''));
    server.create(service('new'));
    server.compact();
    await waitUntil(() => r.events.length >= 3, { what: 'relist results', timeoutMs: 5000 });
    expect(r.events.sort()).toEqual(['eps- default/goes-1', 'svc+ default/new', 'svc- default/goes']);
    expect(listRequests('/api/v1/services').length).toBe(2);
  });

  it('handles a 410 answered as HTTP status too', async () => {
    await server.close();
    server = await TestApiServer.start({ watchGone: 'http' });
    server.create(nodeObj('node-1'));
    server.create(service('goes'));
    const { r } = await started();
    r.events.length = 0;
    server.refuseConnections(200);
    server.delete(service('goes'));
    server.compact();
    await waitUntil(() => r.events.includes('svc- default/goes'), { what: 'delete after relist', timeoutMs: 5000 });
  });

  it('ignores services selected out by label or headless, and deletes a service that leaves the selection', async () => {
    server.create(nodeObj('node-1'));
    server.create(service('mine'));
    server.create(service('other-proxy', { labels: { 'service.kubernetes.io/service-proxy-name': 'other' } }));
    server.create(service('headless', { ip: 'None' }));
    server.create(slice('headless-1', 'headless', '10.244.0.7', { 'service.kubernetes.io/headless': '' }));
    const { r } = await started();
    expect(r.events.filter((e) => e.startsWith('svc+') || e.startsWith('eps+'))).toEqual(['svc+ default/mine']);
    r.events.length = 0;
    server.update(service('mine', { labels: { 'service.kubernetes.io/service-proxy-name': 'other' } }));
    server.create(service('later-other', { labels: { 'service.kubernetes.io/service-proxy-name': 'other' } }));
    await waitUntil(() => r.events.length >= 1);
    await new Promise((res) => setTimeout(res, 100));
    expect(r.events).toEqual(['svc- default/mine']);
  });

  it('serves only the objects of its --service-proxy-name', async () => {
    server.create(nodeObj('node-1'));
    server.create(service('plain'));
    server.create(service('ours', { labels: { 'service.kubernetes.io/service-proxy-name': 'mine' } }));
    const { r } = await started({ serviceProxyName: 'mine' });
    expect(r.events.filter((e) => e.startsWith('svc+'))).toEqual(['svc+ default/ours']);
  });

  it('retries failing initial lists and still syncs once', async () => {
    server.create(nodeObj('node-1'));
    server.create(service('a'));
    const s = newSource();
    await s.loadInitial();
    server.failRequests(4, 500);
    const r = recorder();
    s.start(r.handlers);
    await waitUntil(() => r.events.includes('svc synced') && r.events.includes('eps synced'), { what: 'synced despite failures', timeoutMs: 5000 });
    expect(r.events.filter((e) => e === 'svc synced')).toHaveLength(1);
    expect(r.events).toContain('svc+ default/a');
  });

  it('re-delivers every object as an unchanged update each configSyncPeriod', async () => {
    server.create(nodeObj('node-1'));
    server.create(service('a'));
    const { r } = await started({ configSyncPeriodMs: 100 });
    r.updates.length = 0;
    await waitUntil(() => r.updates.some((u) => u.kind === 'Service'), { what: 'resync' });
    const u = r.updates.find((x) => x.kind === 'Service')!;
    expect(u.previous).toBe(u.current);
    expect(r.updates.some((x) => x.kind === 'Node')).toBe(true);
  });

  it('stops cleanly: no more events, no open watches', async () => {
    server.create(nodeObj('node-1'));
    const { s, r } = await started();
    s.stop();
    await waitUntil(() => server.activeWatches() === 0, { what: 'watches closed' });
    const n = r.events.length;
    server.create(service('after-stop'));
    await new Promise((res) => setTimeout(res, 100));
    expect(r.events.length).toBe(n);
    expect(s.isHealthy()).toBe(false);
    expect(warnings.filter((w) => w.startsWith('Informer'))).toEqual([]);
  });

  it('closes a watch whose headers arrive only after stop()', async () => {
    server.create(nodeObj('node-1'));
    const { s } = await started();
    server.delayResponses(300);
    server.dropAllWatches();
    // The informers reconnect after 50 ms backoff and wait for the delayed headers meanwhile.
    await waitUntil(() => server.requestsWhere((q) => q.query.watch === 'true').length >= 6, { what: 'reconnect attempts' });
    s.stop();
    await new Promise((res) => setTimeout(res, 500));
    expect(server.activeWatches()).toBe(0);
  });

  describe('waiting for the Node', () => {
    it('waits for the pod CIDRs in NodeCIDR mode', async () => {
      server.create(nodeObj('node-1'));
      const s = newSource({ waitForPodCIDR: true });
      setTimeout(() => server.update(nodeObj('node-1', ['10.244.1.0/24'])), 150);
      const t0 = Date.now();
      await s.loadInitial();
      expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
      expect(s.node()?.spec?.podCIDRs).toEqual(['10.244.1.0/24']);
    });

    it('fails clearly in NodeCIDR mode when no pod CIDR arrives in time', async () => {
      server.create(nodeObj('node-1'));
      const s = newSource({ waitForPodCIDR: true, nodeWaitTimeoutMs: 200 });
      await expect(s.loadInitial()).rejects.toThrow(NodeWaitError);
      await expect(newSource({ waitForPodCIDR: true, nodeWaitTimeoutMs: 100 }).loadInitial()).rejects.toThrow(/to have a PodCIDR/);
    });

    it('otherwise goes on without the Node after the wait, with a warning', async () => {
      const s = newSource({ nodeWaitTimeoutMs: 150 });
      await s.loadInitial();
      expect(s.node()).toBeUndefined();
      expect(warnings).toContain('Gave up waiting for the Node object; continuing without it');
      // It appears later: the handlers hear about it.
      const r = recorder();
      s.start(r.handlers);
      server.create(nodeObj('node-1'));
      await waitUntil(() => r.events.includes('node+ node-1'));
    });
  });
});
