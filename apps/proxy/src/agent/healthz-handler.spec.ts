import { FakeClock, RecordingLogger } from '@kube-proxy/core/testing';
import { PromProxyMetrics, ProxierHealthTracker } from '@kube-proxy/core';
import { healthzHandler } from './healthz-handler.js';
import { ManagedHttpServer } from './managed-http-server.js';
import { httpGet } from './testing/http-get.js';

const TIMEOUT = 60_000;

describe('healthz server (/healthz, /livez) on a real socket', () => {
  let clock: FakeClock;
  let health: ProxierHealthTracker;
  let metrics: PromProxyMetrics;
  let server: ManagedHttpServer;
  let port: number;

  beforeEach(async () => {
    clock = new FakeClock(Date.UTC(2024, 4, 1, 12, 0, 0));
    health = new ProxierHealthTracker(clock, TIMEOUT);
    metrics = new PromProxyMetrics({ mode: 'iptables', clock, defaultMetrics: false });
    server = new ManagedHttpServer({
      name: 'healthz',
      address: { host: '127.0.0.1', port: 0, text: '127.0.0.1:0' },
      handler: healthzHandler(health, metrics),
      logger: new RecordingLogger(),
      clock,
      hardFail: true,
    });
    await server.start();
    port = server.port()!;
  });

  afterEach(() => server.stop());

  it('answers 200 with upstream headers and body while healthy', async () => {
    health.updated('IPv4');
    clock.advance(5000);
    const res = await httpGet(port, '/healthz');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const body = JSON.parse(res.body);
    // Healthy: lastUpdated is "now", for clients of older releases.
    expect(body).toEqual({
      lastUpdated: '2024-05-01T12:00:05Z',
      currentTime: '2024-05-01T12:00:05Z',
      nodeEligible: true,
      healthy: true,
      status: { IPv4: { lastUpdated: '2024-05-01T12:00:00Z', healthy: true } },
    });
    expect(Object.keys(body).slice(0, 3)).toEqual(['lastUpdated', 'currentTime', 'nodeEligible']);
  });

  it('flips to 503 when a queued change is not programmed within the timeout, and back', async () => {
    health.updated('IPv4');
    health.queuedUpdate('IPv4');
    clock.advance(TIMEOUT);
    const late = await httpGet(port, '/healthz');
    expect(late.status).toBe(503);
    expect(JSON.parse(late.body)).toMatchObject({ lastUpdated: '2024-05-01T12:00:00Z', healthy: false, nodeEligible: true });
    expect((await httpGet(port, '/livez')).status).toBe(503);

    health.updated('IPv4');
    expect((await httpGet(port, '/healthz')).status).toBe(200);
    expect((await httpGet(port, '/livez')).status).toBe(200);

    const text = await metrics.registry.metrics();
    expect(text).toContain('kubeproxy_proxy_healthz_total{code="503"} 1');
    expect(text).toContain('kubeproxy_proxy_healthz_total{code="200"} 1');
    expect(text).toContain('kubeproxy_proxy_livez_total{code="503"} 1');
  });

  it('fails /healthz but not /livez on a Node that is not eligible', async () => {
    health.syncNodeEligible(false);
    const hz = await httpGet(port, '/healthz');
    expect(hz.status).toBe(503);
    // "healthy" stays the proxier's own health; the Node is reported separately.
    expect(JSON.parse(hz.body)).toMatchObject({ nodeEligible: false, healthy: true });
    const lz = await httpGet(port, '/livez');
    expect(lz.status).toBe(200);
    expect(JSON.parse(lz.body)).not.toHaveProperty('nodeEligible');
  });

  it('reports Go zero time before any sync and 404s other paths', async () => {
    const res = await httpGet(port, '/livez?verbose=1');
    expect(JSON.parse(res.body)).toEqual({ lastUpdated: '2024-05-01T12:00:00Z', currentTime: '2024-05-01T12:00:00Z', healthy: true });
    const nf = await httpGet(port, '/metrics');
    expect(nf.status).toBe(404);
    expect(nf.body).toBe('404 page not found\n');
  });
});
