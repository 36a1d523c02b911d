import { FakeClock } from '../../testing/fake-clock.js';
import { defineUpstreamModeMetrics } from '../../testing/upstream-mode-metrics.js';
import { PromProxyMetrics } from './prom-proxy-metrics.js';

/** A registry with the metrics the backend of `mode` defines when it registers (as upstream's RegisterMetrics(mode)). */
const withMode = (m: PromProxyMetrics, mode: string): PromProxyMetrics => (defineUpstreamModeMetrics(m, mode), m);

/*
 * Expected values are written out from upstream (pkg/proxy/metrics/metrics.go, v1.34 metrics
 * reference), not derived from the implementation's constants.
 */
const SYNC_BUCKETS = [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384];
const NETWORK_PROGRAMMING_BUCKETS = [
  0,
  0.25,
  0.5,
  ...Array.from({ length: 59 }, (_, i) => i + 1),
  ...Array.from({ length: 12 }, (_, i) => 60 + 5 * i),
  120, 150, 180, 210, 240, 270, 300,
];

type Type = 'histogram' | 'gauge' | 'counter';
const UPSTREAM: Record<string, { type: Type; labels: string[]; help: string; iptablesOnly?: boolean }> = {
  kubeproxy_sync_proxy_rules_duration_seconds: { type: 'histogram', labels: ['ip_family'], help: 'SyncProxyRules latency in seconds' },
  kubeproxy_sync_full_proxy_rules_duration_seconds: {
    type: 'histogram',
    labels: ['ip_family'],
    help: 'SyncProxyRules latency in seconds for full resyncs',
    iptablesOnly: true,
  },
  kubeproxy_sync_partial_proxy_rules_duration_seconds: {
    type: 'histogram',
    labels: ['ip_family'],
    help: 'SyncProxyRules latency in seconds for partial resyncs',
    iptablesOnly: true,
  },
  kubeproxy_network_programming_duration_seconds: { type: 'histogram', labels: ['ip_family'], help: 'In Cluster Network Programming Latency in seconds' },
  kubeproxy_sync_proxy_rules_last_timestamp_seconds: { type: 'gauge', labels: ['ip_family'], help: 'The last time proxy rules were successfully synced' },
  kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds: { type: 'gauge', labels: ['ip_family'], help: 'The last time a sync of proxy rules was queued' },
  kubeproxy_sync_proxy_rules_endpoint_changes_pending: { type: 'gauge', labels: [], help: 'Pending proxy rules Endpoint changes' },
  kubeproxy_sync_proxy_rules_endpoint_changes_total: { type: 'counter', labels: [], help: 'Cumulative proxy rules Endpoint changes' },
  kubeproxy_sync_proxy_rules_service_changes_pending: { type: 'gauge', labels: [], help: 'Pending proxy rules Service changes' },
  kubeproxy_sync_proxy_rules_service_changes_total: { type: 'counter', labels: [], help: 'Cumulative proxy rules Service changes' },
  kubeproxy_sync_proxy_rules_iptables_restore_failures_total: {
    type: 'counter',
    labels: ['ip_family'],
    help: 'Cumulative proxy iptables restore failures',
    iptablesOnly: true,
  },
  kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total: {
    type: 'counter',
    labels: ['ip_family'],
    help: 'Cumulative proxy iptables partial restore failures',
    iptablesOnly: true,
  },
  kubeproxy_sync_proxy_rules_iptables_total: {
    type: 'gauge',
    labels: ['ip_family', 'table'],
    help: 'Total number of iptables rules owned by kube-proxy',
    iptablesOnly: true,
  },
  kubeproxy_sync_proxy_rules_iptables_last: {
    type: 'gauge',
    labels: ['ip_family', 'table'],
    help: 'Number of iptables rules written by kube-proxy in last sync',
    iptablesOnly: true,
  },
  kubeproxy_sync_proxy_rules_no_local_endpoints_total: {
    type: 'gauge',
    labels: ['ip_family', 'traffic_policy'],
    help: 'Number of services with a Local traffic policy and no endpoints',
  },
  kubeproxy_proxy_healthz_total: { type: 'counter', labels: ['code'], help: 'Cumulative proxy healthz HTTP status' },
  kubeproxy_proxy_livez_total: { type: 'counter', labels: ['code'], help: 'Cumulative proxy livez HTTP status' },
};

/** Fills every metric with one sample, so each one has series to inspect. */
function exercise(m: PromProxyMetrics): void {
  m.syncQueued('IPv4');
  m.syncDuration('IPv4', 0.003, 'full');
  m.syncDuration('IPv4', 0.0005, 'partial');
  m.syncSucceeded('IPv4');
  m.networkProgrammingLatency('IPv4', 1.5);
  m.noLocalEndpoints('IPv4', { internal: 1, external: 2 });
  m.serviceChangeSeen();
  m.serviceChangesPending(3);
  m.endpointChangeSeen();
  m.endpointChangesPending(4);
  m.iptablesRestoreFailed('IPv4', true);
  m.iptablesRules('IPv4', 'filter', { total: 10, last: 5 });
  m.iptablesRules('IPv4', 'nat', { total: 20, last: 7 });
  m.healthzResponse(200);
  m.livezResponse(503);
}

async function series(m: PromProxyMetrics) {
  return new Map((await m.registry.getMetricsAsJSON()).map((j) => [j.name, j]));
}

function bucketsOf(text: string, name: string): number[] {
  const re = new RegExp(`^${name}_bucket\\{[^}]*le="([^"]+)"[^}]*\\}`, 'gm');
  return [...text.matchAll(re)].map((x) => x[1]).filter((le) => le !== '+Inf').map(Number);
}

describe('PromProxyMetrics', () => {
  it('exports every iptables-mode metric with upstream name, type, labels and help', async () => {
    const m = withMode(new PromProxyMetrics({ defaultMetrics: false }), 'iptables');
    exercise(m);
    const got = await series(m);
    // kube-proxy-ts's own metrics (not upstream's) are covered by their own specs.
    const own = new Set(['kubeproxy_invalid_objects_total']);
    expect([...got.keys()].filter((n) => !own.has(n)).sort()).toEqual(Object.keys(UPSTREAM).sort());
    for (const [name, want] of Object.entries(UPSTREAM)) {
      const metric = got.get(name)!;
      expect({ name, type: metric.type }).toEqual({ name, type: want.type });
      expect(metric.help).toBe(`[ALPHA] ${want.help}`);
      const labels = new Set(metric.values.flatMap((v) => Object.keys(v.labels)).filter((l) => l !== 'le'));
      expect({ name, labels: [...labels].sort() }).toEqual({ name, labels: [...want.labels].sort() });
    }
  });

  it('uses upstream buckets', async () => {
    const m = withMode(new PromProxyMetrics({ defaultMetrics: false }), 'iptables');
    exercise(m);
    const text = await m.registry.metrics();
    for (const name of ['sync_proxy_rules_duration_seconds', 'sync_full_proxy_rules_duration_seconds', 'sync_partial_proxy_rules_duration_seconds']) {
      expect(bucketsOf(text, `kubeproxy_${name}`)).toEqual(SYNC_BUCKETS);
    }
    expect(bucketsOf(text, 'kubeproxy_network_programming_duration_seconds')).toEqual(NETWORK_PROGRAMMING_BUCKETS);
    expect(NETWORK_PROGRAMMING_BUCKETS).toHaveLength(81);
  });

  it('registers mode-specific metrics only in their mode, as upstream RegisterMetrics', async () => {
    const iptablesOnly = Object.keys(UPSTREAM).filter((n) => UPSTREAM[n].iptablesOnly);
    const nft = withMode(new PromProxyMetrics({ defaultMetrics: false }), 'nftables');
    exercise(nft); // calls for unexported metrics are accepted and ignored
    const nftNames = [...(await series(nft)).keys()];
    // nftables mode has the full/partial latencies too, and its own failure counters (upstream's
    // RegisterMetrics for ProxyModeNFTables).
    const sharedWithNftables = ['kubeproxy_sync_full_proxy_rules_duration_seconds', 'kubeproxy_sync_partial_proxy_rules_duration_seconds'];
    for (const n of iptablesOnly) if (!sharedWithNftables.includes(n)) expect(nftNames).not.toContain(n);
    for (const n of sharedWithNftables) expect(nftNames).toContain(n);
    nft.nftablesSyncFailed('IPv4');
    nft.nftablesCleanupFailed('IPv6');
    const text = await nft.registry.metrics();
    expect(text).toContain('kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPv4"} 1');
    expect(text).toContain('kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total{ip_family="IPv6"} 1');
    const iptablesNames = [...(await series(withMode(new PromProxyMetrics({ defaultMetrics: false }), 'iptables'))).keys()];
    expect(iptablesNames).not.toContain('kubeproxy_sync_proxy_rules_nftables_sync_failures_total');

    const ipvs = withMode(new PromProxyMetrics({ defaultMetrics: false }), 'ipvs');
    const ipvsNames = [...(await series(ipvs)).keys()];
    expect(ipvsNames).toContain('kubeproxy_sync_proxy_rules_iptables_restore_failures_total');
    expect(ipvsNames).not.toContain('kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total');
  });

  it('records values: timestamps from the clock in seconds, per-family and per-table series', async () => {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const m = withMode(new PromProxyMetrics({ clock, defaultMetrics: false }), 'iptables');
    m.syncQueued('IPv6');
    clock.advance(1500);
    m.syncSucceeded('IPv6');
    m.iptablesRestoreFailed('IPv6', false);
    m.iptablesRules('IPv6', 'nat', { total: 9, last: 2 });
    m.healthzResponse(503);
    m.healthzResponse(503);
    const text = await m.registry.metrics();
    expect(text).toContain(`kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv6"} ${Date.UTC(2024, 0, 1) / 1000}`);
    expect(text).toContain(`kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6"} ${Date.UTC(2024, 0, 1) / 1000 + 1.5}`);
    expect(text).toContain('kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family="IPv6"} 1');
    expect(text).not.toContain('kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total{');
    expect(text).toContain('kubeproxy_sync_proxy_rules_iptables_total{ip_family="IPv6",table="nat"} 9');
    expect(text).toContain('kubeproxy_sync_proxy_rules_iptables_last{ip_family="IPv6",table="nat"} 2');
    expect(text).toContain('kubeproxy_proxy_healthz_total{code="503"} 2');
    // Unlabelled counters and gauges are exported at 0 from the start, as client_golang does.
    expect(text).toContain('kubeproxy_sync_proxy_rules_service_changes_total 0');
  });

  it('userspace mode: socket totals per family, read at scrape time', async () => {
    const m = withMode(new PromProxyMetrics({ defaultMetrics: false }), 'userspace');
    const v4 = { tcpAccepted: 5, tcpActive: 2, endpointDialFailures: 3, tcpRejected: 1, udpAssociationsOpened: 4, udpAssociationsActive: 1, udpDropped: 0 };
    m.proxySockets('IPv4', () => v4);
    m.proxySockets('IPv6', () => ({ ...v4, tcpAccepted: 0, tcpActive: 0 }));
    let text = await m.registry.metrics();
    expect(text).toContain('kubeproxy_userspace_connections_accepted_total{ip_family="IPv4"} 5');
    expect(text).toContain('kubeproxy_userspace_connections_accepted_total{ip_family="IPv6"} 0');
    expect(text).toContain('# TYPE kubeproxy_userspace_connections_active gauge');
    expect(text).toContain('kubeproxy_userspace_endpoint_dial_failures_total{ip_family="IPv4"} 3');
    expect(text).toContain('kubeproxy_userspace_udp_associations_active{ip_family="IPv4"} 1');
    expect(text).toContain('kubeproxy_sync_proxy_rules_iptables_restore_failures_total');
    v4.tcpAccepted = 9;
    v4.tcpActive = 0;
    text = await m.registry.metrics();
    expect(text).toContain('kubeproxy_userspace_connections_accepted_total{ip_family="IPv4"} 9');
    expect(text).toContain('kubeproxy_userspace_connections_active{ip_family="IPv4"} 0');
    const iptables = await withMode(new PromProxyMetrics({ defaultMetrics: false }), 'iptables').registry.metrics();
    expect(iptables).not.toContain('userspace');
  });

  it('adds the process metrics by default, unprefixed as upstream', async () => {
    const m = withMode(new PromProxyMetrics({}), 'iptables');
    const { contentType, body } = await m.scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(body).toContain('# TYPE process_cpu_seconds_total counter');
    expect(body).toContain('process_start_time_seconds');
    expect(body).toContain('process_resident_memory_bytes');
  });

  // Exported once a reader is registered: the iptables backend is the one that registers it.
  describe('nfacct counters (iptables mode)', () => {
    const INVALID = 'kubeproxy_iptables_ct_state_invalid_dropped_packets_total';
    const LOCALHOST = 'kubeproxy_iptables_localhost_nodeports_accepted_packets_total';

    it('exports both counters with upstream names, help and type, read at scrape time', async () => {
      const m = withMode(new PromProxyMetrics({ defaultMetrics: false }), 'iptables');
      let reads = 0;
      const counts = { ct_state_invalid_dropped_pkts: 3, localhost_nps_accepted_pkts: 12 };
      m.nfacctCounters(async () => {
        reads++;
        return counts;
      });
      let { body } = await m.scrape();
      expect(body).toContain(`# HELP ${INVALID} [ALPHA] packets dropped by iptables to work around conntrack problems\n# TYPE ${INVALID} counter\n${INVALID} 3\n`);
      expect(body).toContain(`# HELP ${LOCALHOST} [ALPHA] Number of packets accepted on nodeports of loopback interface\n# TYPE ${LOCALHOST} counter\n${LOCALHOST} 12\n`);
      counts.localhost_nps_accepted_pkts = 20;
      ({ body } = await m.scrape());
      expect(body).toContain(`${LOCALHOST} 20\n`);
      expect(reads).toBe(2);
    });

    it('leaves out a counter that cannot be read, and both when the reader fails or none is registered', async () => {
      const m = withMode(new PromProxyMetrics({ defaultMetrics: false }), 'iptables');
      expect((await m.scrape()).body).not.toContain('nfacct');
      expect((await m.scrape()).body).not.toContain(INVALID);
      let fail = false;
      m.nfacctCounters(async () => {
        if (fail) throw new Error('nfacct: netlink error');
        return { ct_state_invalid_dropped_pkts: 5 };
      });
      let { body } = await m.scrape();
      expect(body).toContain(`${INVALID} 5`);
      expect(body).not.toContain(LOCALHOST);
      fail = true;
      ({ body } = await m.scrape());
      expect(body).not.toContain(INVALID);
      expect(body).not.toContain(LOCALHOST);
    });
  });
});
