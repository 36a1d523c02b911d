import { defineUpstreamModeMetrics } from '../../testing/upstream-mode-metrics.js';
import { PromProxyMetrics } from './prom-proxy-metrics.js';

/** A registry with the metrics the backend of `mode` defines when it registers (as upstream's RegisterMetrics(mode)). */
const withMode = (m: PromProxyMetrics, mode: string): PromProxyMetrics => (defineUpstreamModeMetrics(m, mode), m);

const NAME = 'kubeproxy_sync_proxy_rules_nftables_failed_services_total';

describe(NAME, () => {
  it('counts, by IP family, service ports nft refused a transaction on', async () => {
    const m = withMode(new PromProxyMetrics({ defaultMetrics: false }), 'nftables');
    m.nftablesServiceFailed('IPv6');
    m.nftablesServiceFailed('IPv6');
    const body = await m.registry.metrics();
    expect(body).toContain(`# TYPE ${NAME} counter\n`);
    expect(body).toContain(`${NAME}{ip_family="IPv6"} 2\n`);
  });

  it.each(['iptables', 'ipvs', 'userspace'])('is not exported in %s mode', async (mode) => {
    const m = withMode(new PromProxyMetrics({ defaultMetrics: false }), mode);
    m.nftablesServiceFailed('IPv4');
    expect(await m.registry.metrics()).not.toContain(NAME);
  });
});
