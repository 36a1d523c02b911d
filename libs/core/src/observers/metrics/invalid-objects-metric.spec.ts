import { PromProxyMetrics } from './prom-proxy-metrics.js';

const NAME = 'kubeproxy_invalid_objects_total';

describe('kubeproxy_invalid_objects_total', () => {
  it.each(['iptables', 'ipvs', 'userspace', 'nftables'])('is a counter by kind, exported at 0 for every kind in %s mode', async (mode) => {
    const m = new PromProxyMetrics({ mode, defaultMetrics: false });
    const body = await m.registry.metrics();
    expect(body).toContain(`# HELP ${NAME} [ALPHA] Objects (Services, EndpointSlices, Nodes) skipped because they failed validation\n`);
    expect(body).toContain(`# TYPE ${NAME} counter\n`);
    for (const kind of ['Service', 'EndpointSlice', 'Node']) expect(body).toContain(`${NAME}{kind="${kind}"} 0\n`);
  });

  it('counts each skipped object under its kind', async () => {
    const m = new PromProxyMetrics({ mode: 'iptables', defaultMetrics: false });
    m.invalidObject('Service');
    m.invalidObject('Service');
    m.invalidObject('Node');
    const body = await m.registry.metrics();
    expect(body).toContain(`${NAME}{kind="Service"} 2\n`);
    expect(body).toContain(`${NAME}{kind="EndpointSlice"} 0\n`);
    expect(body).toContain(`${NAME}{kind="Node"} 1\n`);
  });
});
