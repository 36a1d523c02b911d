import { PromProxyMetrics } from '@kube-proxy/core';
import { defineUpstreamModeMetrics } from '@kube-proxy/core/testing';
import { defineUserspaceModeMetrics } from './metrics.js';

describe('userspace mode metrics', () => {
  it("are exactly what upstream's RegisterMetrics adds for the mode (names, types, labels, help, buckets), in its order", async () => {
    const ours = new PromProxyMetrics({ defaultMetrics: false });
    defineUserspaceModeMetrics(ours);
    const upstream = new PromProxyMetrics({ defaultMetrics: false });
    defineUpstreamModeMetrics(upstream, 'userspace');
    expect(await ours.registry.metrics()).toBe(await upstream.registry.metrics());
    expect(await ours.registry.getMetricsAsJSON()).toEqual(await upstream.registry.getMetricsAsJSON());
  });
});
