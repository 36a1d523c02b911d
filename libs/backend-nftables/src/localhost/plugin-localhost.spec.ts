// The plugin's part of localhost NodePorts: the run's metrics (defined only with the gate on, and
// not in --dry-run, where nothing listens) and each family's proxier getting its listeners.
import { CLOCK, COMMAND_EXECUTOR, DualStackProvider, LOGGER, METRICS_REGISTRY, PromProxyMetrics, PROVIDER, SYSCTL } from '@kube-proxy/core';
import { FakeClock, FakeCommandExecutor, FakeSysctl, fakeContainer, RecordingLogger, testContext } from '@kube-proxy/core/testing';
import { nftablesBackend } from '../plugin.js';
import type { NftablesProxier } from '../proxier/nftables-proxier.js';

function container(metrics: PromProxyMetrics) {
  return fakeContainer([
    [LOGGER, new RecordingLogger()],
    [CLOCK, new FakeClock()],
    [COMMAND_EXECUTOR, new FakeCommandExecutor()],
    [SYSCTL, new FakeSysctl()],
    [METRICS_REGISTRY, metrics],
  ]);
}

const gateOn = { KubeProxyNFTablesLocalhostNodePorts: true };
const nodeIPs = { IPv4: '192.168.0.2', IPv6: 'fd00::2' };

describe('nftablesBackend with KubeProxyNFTablesLocalhostNodePorts', () => {
  it('gate on: the metrics are defined and both families get listeners when nodePortAddresses names their loopback', async () => {
    const metrics = new PromProxyMetrics({ mode: 'nftables', defaultMetrics: false });
    const c = container(metrics);
    const config = { ...testContext().config, featureGates: gateOn, nodePortAddresses: ['127.0.0.0/8', '::1/128'] };
    await nftablesBackend.register(c.container, testContext({ families: ['IPv4', 'IPv6'], nodeIPs, config }));
    const provider = c.values.get(PROVIDER) as DualStackProvider;
    expect(provider).toBeInstanceOf(DualStackProvider);
    const proxiers = provider.providers as unknown as NftablesProxier[];
    expect(proxiers.map((p) => [p.localhost?.proxyActive, p.localhost?.listeners?.listenIP])).toEqual([
      [true, '127.0.0.1'],
      [true, '::1'],
    ]);
    const body = await metrics.registry.metrics();
    expect(body).toContain('# TYPE kubeproxy_nftables_localhost_nodeport_listeners gauge');
    expect(body).toContain('# TYPE kubeproxy_nftables_localhost_nodeport_listener_creation_failures_total counter');
    expect(body).toContain('# TYPE kubeproxy_nftables_localhost_nodeport_rejected_packets_total counter');
  });

  it('gate off, or --dry-run: no metrics, no listeners', async () => {
    for (const [featureGates, dryRun] of [
      [{}, false],
      [gateOn, true],
    ] as const) {
      const metrics = new PromProxyMetrics({ mode: 'nftables', defaultMetrics: false });
      const c = container(metrics);
      const config = { ...testContext().config, featureGates, nodePortAddresses: ['127.0.0.0/8'] };
      await nftablesBackend.register(c.container, testContext({ families: ['IPv4'], nodeIPs, config, dryRun }));
      const proxier = c.values.get(PROVIDER) as NftablesProxier;
      expect(proxier.localhost?.listeners).toBeUndefined();
      expect(await metrics.registry.metrics()).not.toContain('localhost_nodeport');
    }
  });
});
