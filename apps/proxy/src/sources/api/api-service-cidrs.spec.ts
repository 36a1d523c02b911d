import { nullLogger, type Logger } from '@kube-proxy/core';
import { TestApiServer, waitUntil, type KubeObject } from '@kube-proxy/testing-apiserver';
import type { ManifestHandlers } from '../manifests/manifest-source.js';
import { ApiSource } from './api-source.js';
import { createKubeClient } from './kube-client.js';
import { SERVICE_CIDRS_PATH } from './service-cidr-informer.js';

// ApiSource's ServiceCIDR path against the test API server: one complete list per change, and an
// optional resource (404/403) that never holds up the rest.

const serviceCIDR = (name: string, cidrs: unknown): KubeObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name }, spec: { cidrs } });
const nodeObj: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.1.10' }] } };

function recorder(withCIDRs = true) {
  const events: string[] = [];
  const none = () => undefined;
  const handlers: ManifestHandlers = {
    services: { onServiceAdd: none, onServiceUpdate: none, onServiceDelete: none, onServicesSynced: () => void events.push('svc synced') },
    endpointSlices: { onEndpointSliceAdd: none, onEndpointSliceUpdate: none, onEndpointSliceDelete: none, onEndpointSlicesSynced: () => void events.push('eps synced') },
    node: { onNodeAdd: none, onNodeUpdate: none, onNodeDelete: none, onNodeSynced: none },
    ...(withCIDRs ? { serviceCIDRs: { onServiceCIDRsChanged: (c: readonly string[]) => void events.push(`cidrs ${c.join(',')}`) } } : {}),
  };
  return { events, handlers, cidrLists: () => events.filter((e) => e.startsWith('cidrs')) };
}

describe('ApiSource ServiceCIDRs', () => {
  let server: TestApiServer;
  const sources: ApiSource[] = [];
  const logs: string[] = [];
  const logger: Logger = {
    ...nullLogger,
    info: (m) => void logs.push(`I ${m}`),
    warn: (m) => void logs.push(`W ${m}`),
    error: (m) => void logs.push(`E ${m}`),
    child: () => logger,
  };

  beforeEach(async () => {
    server = await TestApiServer.start();
    server.create(nodeObj);
    logs.length = 0;
  });
  afterEach(async () => {
    for (const s of sources.splice(0)) s.stop();
    await server.close();
  });

  async function started(withCIDRs = true) {
    const client = createKubeClient({
      master: server.url,
      clientConnection: { qps: -1, burst: 0, contentType: 'application/json', acceptContentTypes: '' },
      logger,
    });
    const s = new ApiSource({
      client,
      nodeName: 'node-1',
      serviceProxyName: '',
      logger,
      configSyncPeriodMs: 0,
      waitForPodCIDR: false,
      nodeWaitTimeoutMs: 2000,
      nodePollIntervalMs: 10,
      postStartingEvent: false,
      backoff: { initialMs: 50, maxMs: 200, resetAfterMs: 10_000 },
    });
    sources.push(s);
    const r = recorder(withCIDRs);
    await s.loadInitial();
    s.start(r.handlers);
    await waitUntil(() => r.events.includes('svc synced') && r.events.includes('eps synced'), { what: 'synced' });
    return { s, r };
  }

  const cidrRequests = () => server.requestsWhere((q) => q.path === SERVICE_CIDRS_PATH);

  it('lists ServiceCIDRs (unfiltered) and delivers the whole list once, de-duplicated and sorted', async () => {
    server.create(serviceCIDR('kubernetes', ['10.96.0.0/12', 'fd00:10:96::/112']));
    server.create(serviceCIDR('extra', ['10.100.0.0/16']));
    server.create(serviceCIDR('again', ['10.96.0.0/12']));
    const { r } = await started();
    await waitUntil(() => r.cidrLists().length === 1, { what: 'the initial list' });
    expect(r.cidrLists()).toEqual(['cidrs 10.100.0.0/16,10.96.0.0/12,fd00:10:96::/112']);
    const list = cidrRequests().find((q) => q.query.watch === undefined);
    expect(list?.query).toEqual({});
    await waitUntil(() => server.activeWatches() === 4, { what: '4 watches' });
  });

  it('follows watch add, update and delete with the new complete list each time', async () => {
    const { r } = await started();
    await waitUntil(() => server.activeWatches() === 4, { what: '4 watches' });
    // An empty initial list is not announced.
    expect(r.cidrLists()).toEqual([]);
    server.create(serviceCIDR('kubernetes', ['10.96.0.0/12']));
    await waitUntil(() => r.cidrLists().length === 1);
    server.create(serviceCIDR('second', ['10.200.0.0/16']));
    await waitUntil(() => r.cidrLists().length === 2);
    server.update(serviceCIDR('second', ['10.201.0.0/16']));
    await waitUntil(() => r.cidrLists().length === 3);
    server.delete(serviceCIDR('kubernetes', []));
    await waitUntil(() => r.cidrLists().length === 4);
    server.delete(serviceCIDR('second', []));
    await waitUntil(() => r.cidrLists().length === 5);
    expect(r.cidrLists()).toEqual(['cidrs 10.96.0.0/12', 'cidrs 10.200.0.0/16,10.96.0.0/12', 'cidrs 10.201.0.0/16,10.96.0.0/12', 'cidrs 10.201.0.0/16', 'cidrs ']);
  });

  it('skips a malformed ServiceCIDR with one warning naming the problem; the others keep working', async () => {
    server.create(serviceCIDR('kubernetes', ['10.96.0.0/12']));
    server.create(serviceCIDR('broken', ['10.97.0.0']));
    const { r } = await started();
    await waitUntil(() => r.cidrLists().length === 1);
    server.create(serviceCIDR('three', ['10.1.0.0/16', 'fd00::/112', '10.2.0.0/16']));
    server.create(serviceCIDR('later', ['fd00::/112']));
    await waitUntil(() => r.cidrLists().length === 2);
    expect(r.cidrLists()).toEqual(['cidrs 10.96.0.0/12', 'cidrs 10.96.0.0/12,fd00::/112']);
    expect(logs.filter((l) => l.includes('ServiceCIDR'))).toEqual(['W Skipping invalid ServiceCIDR', 'W Skipping invalid ServiceCIDR']);
  });

  it('on 404 (a server without the API) says so once at info, stops asking, and the rest syncs and is healthy', async () => {
    server.denyResource('servicecidrs', 404);
    const { s, r } = await started();
    await waitUntil(() => logs.some((l) => l.startsWith('I The API server does not serve')), { what: 'the info line' });
    await new Promise((res) => setTimeout(res, 400));
    expect(cidrRequests()).toHaveLength(1);
    expect(logs.filter((l) => l.includes('ServiceCIDR') || l.startsWith('W') || l.startsWith('E'))).toEqual([
      'I The API server does not serve networking.k8s.io/v1 ServiceCIDRs; going on without them',
    ]);
    expect(r.cidrLists()).toEqual([]);
    expect(s.isHealthy()).toBe(true);
    expect(s.serviceCIDRHealth().state).toBe('stopped');
  });

  it('on 403 warns once, keeps retrying quietly without holding up the sync or the health, and catches up when allowed', async () => {
    server.denyResource('servicecidrs', 403);
    server.create(serviceCIDR('kubernetes', ['10.96.0.0/12']));
    const { s, r } = await started();
    await waitUntil(() => cidrRequests().length >= 3, { what: 'retries' });
    expect(logs.filter((l) => l.startsWith('W') || l.startsWith('E'))).toEqual(['W Not allowed to list/watch ServiceCIDRs; going on without them and retrying quietly']);
    expect(s.isHealthy()).toBe(true);
    server.denyResource('servicecidrs', 0);
    await waitUntil(() => r.cidrLists().length === 1, { what: 'the list once allowed' });
    expect(r.cidrLists()).toEqual(['cidrs 10.96.0.0/12']);
  });

  it('does not watch ServiceCIDRs for handlers that do not take them', async () => {
    server.create(serviceCIDR('kubernetes', ['10.96.0.0/12']));
    await started(false);
    await waitUntil(() => server.activeWatches() === 3, { what: '3 watches' });
    expect(cidrRequests()).toEqual([]);
  });

  it('stops the ServiceCIDR watch with the source', async () => {
    const { s } = await started();
    await waitUntil(() => server.activeWatches() === 4, { what: '4 watches' });
    s.stop();
    await waitUntil(() => server.activeWatches() === 0, { what: 'watches closed' });
    expect(logs.filter((l) => l.startsWith('W') || l.startsWith('E'))).toEqual([]);
  });
});
