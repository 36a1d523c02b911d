import { defaultConfiguration, PromProxyMetrics, systemClock } from '@kube-proxy/core';
import { defineUpstreamModeMetrics, RecordingLogger } from '@kube-proxy/core/testing';
import { ManagedHttpServer } from './managed-http-server.js';
import { CONFIGZ_GROUP, metricsHandler } from './metrics-handler.js';
import { httpGet } from './testing/http-get.js';

describe('metrics server on a real socket', () => {
  const config = { ...defaultConfiguration(), mode: 'iptables' };
  // With the metrics the iptables backend defines when it registers.
  const metrics = new PromProxyMetrics({});
  defineUpstreamModeMetrics(metrics, 'iptables');
  let server: ManagedHttpServer;
  let port: number;

  beforeAll(async () => {
    server = new ManagedHttpServer({
      name: 'metrics',
      address: { host: '127.0.0.1', port: 0, text: '127.0.0.1:0' },
      handler: metricsHandler({ metrics, mode: 'iptables', config, logger: new RecordingLogger() }),
      logger: new RecordingLogger(),
      clock: systemClock,
      hardFail: true,
    });
    await server.start();
    port = server.port()!;
  });

  afterAll(() => server.stop());

  it('serves /metrics in the Prometheus text format', async () => {
    metrics.syncDuration('IPv4', 0.01, 'full');
    const res = await httpGet(port, '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE kubeproxy_sync_proxy_rules_duration_seconds histogram');
    expect(res.body).toContain('kubeproxy_sync_full_proxy_rules_duration_seconds_count{ip_family="IPv4"} 1');
    expect(res.body).toContain('process_cpu_seconds_total');
  });

  it('serves /proxyMode as text', async () => {
    const res = await httpGet(port, '/proxyMode');
    expect(res).toMatchObject({ status: 200, body: 'iptables' });
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves /configz: the effective configuration under its API group', async () => {
    const res = await httpGet(port, '/configz');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const body = JSON.parse(res.body);
    expect(Object.keys(body)).toEqual([CONFIGZ_GROUP]);
    expect(body[CONFIGZ_GROUP]).toMatchObject({ mode: 'iptables', metricsBindAddress: config.metricsBindAddress });
  });

  it('answers the generic /healthz and 404s the rest', async () => {
    expect(await httpGet(port, '/healthz')).toMatchObject({ status: 200, body: 'ok' });
    expect((await httpGet(port, '/nope')).status).toBe(404);
  });
});
