import { defaultConfiguration, nullLogger, systemClock, type KubeProxyConfiguration, type Logger } from '@kube-proxy/core';
import { FakeClock, FakeSysctl, RecordingLogger } from '@kube-proxy/core/testing';
import { TestApiServer, waitUntil } from '@kube-proxy/testing-apiserver';
import { ApiSource } from '../sources/api/api-source.js';
import { createKubeClient } from '../sources/api/kube-client.js';
import { healthTimeoutMs, ProxyAgent } from './agent.js';
import { apiSourceHealth, type InformerHealthView, type SourceHealth } from './source-health.js';
import { httpGet } from './testing/http-get.js';

const T0 = Date.UTC(2024, 0, 1);

describe('apiSourceHealth', () => {
  let informers: InformerHealthView[];
  const source = { health: () => informers };

  it('is healthy while nothing fails, including at startup before any list', () => {
    informers = [
      { resource: 'services', state: 'listing' },
      { resource: 'nodes', state: 'idle' },
    ];
    const h = apiSourceHealth(source, 60_000);
    expect(h.isHealthy(T0)).toBe(true);
    expect(h.reason?.(T0)).toBeUndefined();
  });

  it('turns unhealthy once an informer has been failing for the timeout, and says why', () => {
    informers = [
      { resource: 'services', state: 'backoff', failingSince: T0, lastError: 'connect ECONNREFUSED' },
      { resource: 'endpointslices', state: 'watching' },
      // Stopped informers are not judged.
      { resource: 'nodes', state: 'stopped', failingSince: T0 - 600_000 },
    ];
    const h = apiSourceHealth(source, 60_000);
    expect(h.isHealthy(T0 + 59_999)).toBe(true);
    expect(h.isHealthy(T0 + 60_000)).toBe(false);
    expect(h.reason?.(T0 + 75_000)).toBe('API server unreachable for 75s: services (connect ECONNREFUSED)');
    informers = [{ resource: 'services', state: 'watching' }];
    expect(h.isHealthy(T0 + 75_000)).toBe(true);
  });
});

function config(over: Partial<KubeProxyConfiguration> = {}): KubeProxyConfiguration {
  return { ...defaultConfiguration(), healthzBindAddress: '127.0.0.1:0', metricsBindAddress: '', ...over };
}

function agent(cfg: KubeProxyConfiguration, clock: FakeClock | typeof systemClock, sourceHealth?: SourceHealth) {
  return new ProxyAgent({
    config: cfg,
    mode: 'iptables',
    nodeName: 'node-1',
    dryRun: false,
    serve: { healthz: true, metrics: false, serviceHealthChecks: false },
    logger: new RecordingLogger(),
    clock,
    sysctl: new FakeSysctl(),
    defaultMetrics: false,
    ...(sourceHealth ? { sourceHealth } : {}),
  });
}

describe('/healthz with a source health', () => {
  it('fails /healthz but not /livez while the source is unhealthy, with the reason in the body', async () => {
    const clock = new FakeClock(T0);
    let healthy = true;
    const seen: number[] = [];
    const fake: SourceHealth = {
      isHealthy: (now) => (seen.push(now), healthy),
      reason: () => 'API server unreachable for 61s: services',
    };
    const a = agent(config(), clock, fake);
    await a.start();
    try {
      a.health.updated('IPv4');
      const port = a.healthzPort()!;
      const ok = await httpGet(port, '/healthz');
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body)).toMatchObject({ healthy: true, nodeEligible: true, sourceHealthy: true });
      expect(JSON.parse(ok.body)).not.toHaveProperty('sourceReason');
      expect(seen).toEqual([T0]); // judged at the agent clock's time

      healthy = false;
      const bad = await httpGet(port, '/healthz');
      expect(bad.status).toBe(503);
      // "healthy" stays the proxier's own health, as for nodeEligible.
      expect(JSON.parse(bad.body)).toMatchObject({ healthy: true, sourceHealthy: false, sourceReason: 'API server unreachable for 61s: services' });
      const live = await httpGet(port, '/livez');
      expect(live.status).toBe(200);
      expect(JSON.parse(live.body)).not.toHaveProperty('sourceHealthy');

      healthy = true;
      expect((await httpGet(port, '/healthz')).status).toBe(200);
    } finally {
      await a.stop();
    }
  });

  it('leaves the body as upstream without a source (manifests)', async () => {
    const a = agent(config(), new FakeClock(T0));
    await a.start();
    try {
      const body = JSON.parse((await httpGet(a.healthzPort()!, '/healthz')).body);
      expect(body).not.toHaveProperty('sourceHealthy');
    } finally {
      await a.stop();
    }
  });
});

describe('/healthz with an ApiSource against the test API server', () => {
  let server: TestApiServer;
  beforeEach(async () => {
    server = await TestApiServer.start();
  });
  afterEach(() => server.close());

  it('turns 503 when the API server is unreachable for 2 × syncPeriod, and 200 once it is back', async () => {
    const logger: Logger = { ...nullLogger, child: () => logger };
    server.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, spec: {}, status: {} });
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
      postStartingEvent: false,
      backoff: { initialMs: 50, maxMs: 200, resetAfterMs: 10_000 },
    });
    const cfg = config({ iptables: { ...defaultConfiguration().iptables, syncPeriod: '300ms' } });
    const timeout = healthTimeoutMs(cfg, 'iptables');
    expect(timeout).toBe(600);
    const a = agent(cfg, systemClock, apiSourceHealth(source, timeout));
    await source.loadInitial();
    await a.start();
    const noop = () => undefined;
    source.start({
      services: { onServiceAdd: noop, onServiceUpdate: noop, onServiceDelete: noop, onServicesSynced: noop },
      endpointSlices: { onEndpointSliceAdd: noop, onEndpointSliceUpdate: noop, onEndpointSliceDelete: noop, onEndpointSlicesSynced: noop },
      node: { onNodeAdd: noop, onNodeUpdate: noop, onNodeDelete: noop, onNodeSynced: noop },
    });
    try {
      const port = a.healthzPort()!;
      await waitUntil(() => server.activeWatches() === 3, { what: '3 watches' });
      expect((await httpGet(port, '/healthz')).status).toBe(200);

      server.refuseConnections(2000);
      let body: Record<string, unknown> = {};
      await waitUntil(
        async () => {
          const res = await httpGet(port, '/healthz');
          body = JSON.parse(res.body) as Record<string, unknown>;
          return res.status === 503;
        },
        { what: '/healthz 503', timeoutMs: 1900 },
      );
      expect(body).toMatchObject({ sourceHealthy: false });
      expect(String(body['sourceReason'])).toMatch(/^API server unreachable for \d+s: /);
      expect((await httpGet(port, '/livez')).status).toBe(200);

      await waitUntil(async () => (await httpGet(port, '/healthz')).status === 200, { what: '/healthz 200 again', timeoutMs: 5000 });
    } finally {
      source.stop();
      await a.stop();
    }
  }, 15_000);
});
