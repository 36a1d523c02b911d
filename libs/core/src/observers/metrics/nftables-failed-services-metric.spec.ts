import { PromProxyMetrics } from './prom-proxy-metrics.js';

const NAME = 'kubeproxy_sync_proxy_rules_nftables_failed_services_total';

describe(NAME, () => {
  it('counts, by IP family, service ports nft refused a transaction on', async () => {
    const m = new PromProxyMetrics({ mode: 'nftables', defaultMetrics: false });
    m.nftablesServiceFailed('IPv6');
    m.nftablesServiceFailed('IPv6');
    const body = await m.registry.metrics();
    expect(body).toContain(`# TYPE ${NAME} counter\n`);
    expect(body).toContain(`${NAME}{ip_family="IPv6"} 2\n`);
  });

  it.each(['iptables', 'ipvs', 'userspace'])('is not exported in %s mode', async (mode) => {
    const m = new PromProxyMetrics({ mode, defaultMetrics: false });
    m.nftablesServiceFailed('IPv4');
    expect(await m.registry.metrics()).not.toContain(NAME);
  });
});
