import type { IPFamily, ServiceHealthServer } from '@kube-proxy/core';
import { ANNOTATION_LAST_CHANGE_TRIGGER_TIME, PromProxyMetrics, ProxierHealthTracker } from '@kube-proxy/core';
import { FakeClock, FakeCommandExecutor, FakeSysctl, RecordingLogger, advanceSettling } from '@kube-proxy/core/testing';
import { IptablesProxier } from './iptables-proxier.js';
import type { V1EndpointSlice, V1Service } from './k8s-types.js';
import type { PortSpec } from './testing/proxier-fixtures.js';
import { context, service, settle, slice, TestIptables } from './testing/proxier-fixtures.js';
import { defineIptablesModeMetrics } from '../metrics.js';

// The proxier reporting to the agent's parts (health, metrics, health-check ports) as upstream's
// syncProxyRules does. Timeout = 2 × syncPeriod (30 s).
const TIMEOUT = 60_000;
const HTTP: PortSpec[] = [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }];

/** A LoadBalancer Service with externalTrafficPolicy=Local and its health-check node port. */
function localLB(ns: string, name: string, ip: string, hcPort: number): V1Service {
  const svc = service(ns, name, ip, [{ ...HTTP[0], nodePort: 30080 }], 'LoadBalancer');
  return { ...svc, spec: { ...svc.spec, externalTrafficPolicy: 'Local', healthCheckNodePort: hcPort } };
}

class RecordingServiceHealth implements ServiceHealthServer {
  services = new Map<string, number>();
  endpoints = new Map<string, number>();
  families: (IPFamily | undefined)[] = [];
  async syncServices(services: ReadonlyMap<string, number>, family?: IPFamily): Promise<void> {
    this.services = new Map(services);
    this.families.push(family);
  }
  async syncEndpoints(endpoints: ReadonlyMap<string, number>): Promise<void> {
    this.endpoints = new Map(endpoints);
  }
}

async function setup(start = Date.UTC(2024, 0, 1)) {
  const clock = new FakeClock(start);
  const ipt = new TestIptables('IPv4');
  const health = new ProxierHealthTracker(clock, TIMEOUT);
  const metrics = new PromProxyMetrics({ clock, defaultMetrics: false });
  // The metrics the iptables backend defines when it registers.
  defineIptablesModeMetrics(metrics);
  const serviceHealth = new RecordingServiceHealth();
  const proxier = new IptablesProxier({
    family: 'IPv4',
    context: context(),
    iptables: ipt,
    executor: new FakeCommandExecutor().setDefault({ exitCode: 0 }),
    sysctl: new FakeSysctl({ 'net/netfilter/nf_conntrack_tcp_be_liberal': '0' }),
    clock,
    logger: new RecordingLogger(),
    dryRunTables: ipt.tables,
    networkInterfaces: () => ({}),
    observers: { health, metrics, serviceHealth },
  });
  const loop = proxier.syncLoop();
  return { clock, ipt, health, metrics, serviceHealth, proxier, loop };
}

type Setup = Awaited<ReturnType<typeof setup>>;

const advance = (s: Setup, ms: number, step = 1000): Promise<void> => advanceSettling(s.clock, ms, step);

async function finish(s: Setup): Promise<void> {
  s.proxier.stop();
  await s.loop;
}

const text = (s: Setup) => s.metrics.registry.metrics();

describe('IptablesProxier reporting to health, metrics and the service health server', () => {
  it('reports a successful sync: health updated, timestamps, durations, rule counts, health-check ports', async () => {
    const s = await setup();
    const lb = localLB('ns3', 'lb', '10.96.0.77', 32000);
    const eps: V1EndpointSlice = slice('ns3', 'lb', 'lb-1', HTTP, ['10.244.1.31', '10.244.1.32']);
    s.proxier.onServiceAdd(lb);
    s.proxier.onEndpointSliceAdd(eps);
    s.proxier.onEndpointSliceAdd(slice('ns3', 'lb', 'lb-v6', HTTP, ['fd00::31'])); // the other family: not counted
    s.proxier.onServicesSynced();
    s.proxier.onEndpointSlicesSynced();
    await settle();

    expect(s.proxier.stats.syncs).toBe(1);
    expect(s.health.health().status.IPv4).toEqual({ lastUpdated: s.clock.now(), healthy: true });
    expect(s.serviceHealth.services).toEqual(new Map([['ns3/lb', 32000]]));
    expect(s.serviceHealth.endpoints).toEqual(new Map([['ns3/lb', 2]]));
    expect(s.serviceHealth.families).toEqual(['IPv4']);

    const m = await text(s);
    const now = s.clock.now() / 1000;
    expect(m).toContain(`kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} ${now}`);
    expect(m).toContain(`kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"} ${now}`);
    expect(m).toContain('kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"} 1');
    expect(m).toContain('kubeproxy_sync_full_proxy_rules_duration_seconds_count{ip_family="IPv4"} 1');
    expect(m).toContain(`kubeproxy_sync_proxy_rules_iptables_total{ip_family="IPv4",table="nat"} ${s.proxier.stats.natRulesTotal}`);
    expect(m).toContain(`kubeproxy_sync_proxy_rules_iptables_last{ip_family="IPv4",table="filter"} ${s.proxier.stats.filterRulesLast}`);
    expect(s.proxier.stats.natRulesTotal).toBeGreaterThan(0);
    expect(m).toContain('kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family="IPv4",traffic_policy="external"} 0');
    expect(m).toContain('kubeproxy_sync_proxy_rules_service_changes_total 1');
    expect(m).toContain('kubeproxy_sync_proxy_rules_endpoint_changes_total 1');
    expect(m).toContain('kubeproxy_sync_proxy_rules_endpoint_changes_pending 0');
    await finish(s);
  });

  it('goes unhealthy while restores keep failing, counts the failures, and recovers', async () => {
    const s = await setup();
    s.proxier.onServiceAdd(service('ns1', 'web', '10.96.0.10', HTTP));
    s.proxier.onEndpointSliceAdd(slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11']));
    s.proxier.onServicesSynced();
    s.proxier.onEndpointSlicesSynced();
    await settle();
    await advance(s, 2000);

    // The partial sync for this change fails, and so do the full-sync retries every syncPeriod.
    s.ipt.failRestores = { count: 3, line: 1 };
    s.proxier.onEndpointSliceUpdate(
      slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11']),
      slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.12']),
    );
    await settle();
    await advance(s, 30_000);
    expect(s.proxier.stats.restoreFailures).toBe(2);
    expect(s.health.isHealthy()).toBe(true); // queued 30 s ago: not late yet
    await advance(s, 30_000);
    expect(s.proxier.stats.restoreFailures).toBe(3);
    expect(s.health.isHealthy()).toBe(false); // 60 s = 2 × syncPeriod without programming it

    const m = await text(s);
    expect(m).toContain('kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family="IPv4"} 3');
    expect(m).toContain('kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total{ip_family="IPv4"} 1');
    expect(m).toContain('kubeproxy_sync_partial_proxy_rules_duration_seconds_count{ip_family="IPv4"} 1');

    await advance(s, 30_000); // the next retry succeeds
    expect(s.health.isHealthy()).toBe(true);
    await finish(s);
  });

  it('observes network programming latency from the EndpointSlice trigger time', async () => {
    // Trigger times older than the tracker's start (real time) are ignored, so the clock runs ahead of it.
    const s = await setup(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000);
    s.proxier.onServicesSynced();
    s.proxier.onEndpointSlicesSynced();
    await settle();
    await advance(s, 5000);

    const triggered = new Date(s.clock.now() - 1500).toISOString();
    const eps = slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11']);
    s.proxier.onServiceAdd(service('ns1', 'web', '10.96.0.10', HTTP));
    s.proxier.onEndpointSliceAdd({ ...eps, metadata: { ...eps.metadata, annotations: { [ANNOTATION_LAST_CHANGE_TRIGGER_TIME]: triggered } } });
    await settle();

    const m = await text(s);
    expect(m).toContain('kubeproxy_network_programming_duration_seconds_count{ip_family="IPv4"} 1');
    expect(m).toContain('kubeproxy_network_programming_duration_seconds_sum{ip_family="IPv4"} 1.5');
    await finish(s);
  });

  it('works without any observer (a host app that provides none)', async () => {
    const ipt = new TestIptables('IPv4');
    const proxier = new IptablesProxier({
      family: 'IPv4',
      context: context(),
      iptables: ipt,
      executor: new FakeCommandExecutor(),
      sysctl: new FakeSysctl(),
      clock: new FakeClock(),
      logger: new RecordingLogger(),
      dryRunTables: ipt.tables,
      networkInterfaces: () => ({}),
    });
    const loop = proxier.syncLoop();
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await settle();
    expect(proxier.stats.syncs).toBe(1);
    proxier.stop();
    await loop;
  });
});
