import { PromProxyMetrics } from './prom-proxy-metrics.js';
import type { MetricsRegistry } from './metrics-registry.js';

// A plugin's own metrics, through the registry API: prefixed and marked as the host's, on /metrics.
describe('MetricsRegistry (PromProxyMetrics)', () => {
  const fresh = () => new PromProxyMetrics({ mode: 'example', defaultMetrics: false });

  it('exports counters, gauges and histograms a backend defines, with the kubeproxy_ prefix and [ALPHA] help', async () => {
    const metrics = fresh();
    const registry: MetricsRegistry = metrics;
    registry.counter({ name: 'example_failures_total', help: 'Example failures', labelNames: ['ip_family'] }).inc({ ip_family: 'IPv4' });
    registry.gauge({ name: 'example_rules', help: 'Example rules', labelNames: ['ip_family', 'table'] }).set({ ip_family: 'IPv6', table: 'nat' }, 7);
    registry.histogram({ name: 'example_seconds', help: 'Example latency', labelNames: ['ip_family'], buckets: [0.1, 1] }).observe({ ip_family: 'IPv4' }, 0.5);
    const { body } = await metrics.scrape();
    expect(body).toContain('# HELP kubeproxy_example_failures_total [ALPHA] Example failures\n# TYPE kubeproxy_example_failures_total counter');
    expect(body).toContain('kubeproxy_example_failures_total{ip_family="IPv4"} 1');
    expect(body).toContain('kubeproxy_example_rules{ip_family="IPv6",table="nat"} 7');
    expect(body).toContain('kubeproxy_example_seconds_bucket{le="0.1",ip_family="IPv4"} 0');
    expect(body).toContain('kubeproxy_example_seconds_bucket{le="1",ip_family="IPv4"} 1');
  });

  it('gives the same metric for the same definition, and refuses a conflicting one or a host metric name', async () => {
    const metrics = fresh();
    const def = { name: 'example_total', help: 'Example', labelNames: ['ip_family'] } as const;
    metrics.counter(def).inc({ ip_family: 'IPv4' });
    metrics.counter(def).inc({ ip_family: 'IPv4' }, 2);
    expect(await metrics.registry.metrics()).toContain('kubeproxy_example_total{ip_family="IPv4"} 3');
    expect(() => metrics.gauge(def)).toThrow(/already defined differently/);
    expect(() => metrics.counter({ ...def, help: 'Other' })).toThrow(/already defined differently/);
    expect(() => metrics.counter({ name: 'proxy_healthz_total', help: 'x', labelNames: ['code'] })).toThrow(/host's own metrics/);
    // Host metrics not exported yet (the proxy sockets', until a userspace proxier reports) are reserved too.
    expect(() => metrics.gauge({ name: 'userspace_connections_active', help: 'x' })).toThrow(/host's own metrics/);
  });
  it('runs what a backend asked for before each scrape, so values read from the kernel are current (a failing read keeps the last values)', async () => {
    const metrics = fresh();
    const registry: MetricsRegistry = metrics;
    const rejected = registry.counter({ name: 'example_rejected_total', help: 'Example', labelNames: ['protocol'] });
    let kernel = 3;
    let fail = false;
    registry.beforeScrape?.(async () => {
      if (fail) throw new Error('nft: no such chain');
      rejected.inc({ protocol: 'UDP' }, kernel);
      kernel = 0;
    });
    expect((await metrics.scrape()).body).toContain('kubeproxy_example_rejected_total{protocol="UDP"} 3');
    fail = true;
    expect((await metrics.scrape()).body).toContain('kubeproxy_example_rejected_total{protocol="UDP"} 3');
  });
});
