import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { IPFamily } from '../../semantics/model/protocol.js';
import { systemClock, type Clock } from '../../host/clock.js';
import { exponentialBuckets, linearBuckets, mergeBuckets } from './buckets.js';
import { NFACCT_COUNTER_METRICS, type IptablesTable, type NfacctPacketCounts, type ProxyMetrics, type ProxySocketStats, type SyncKind } from './proxy-metrics.js';
import type { InvalidObjectKind } from './proxy-metrics.js';
import type { CounterHandle, GaugeHandle, HistogramDefinition, HistogramHandle, MetricDefinition, MetricsRegistry } from './metrics-registry.js';

/** Upstream's metrics subsystem: every name starts with it. */
export const KUBE_PROXY_SUBSYSTEM = 'kubeproxy';

/** Upstream's sync-duration buckets: 1 ms doubling up to ~16 s. */
export const SYNC_DURATION_BUCKETS: readonly number[] = exponentialBuckets(0.001, 2, 15);

/** Upstream's network-programming buckets: 0, 0.25 s, 0.5 s, 1–59 s, 60–115 s by 5, 2–5 min by 30 s. */
export const NETWORK_PROGRAMMING_BUCKETS: readonly number[] = mergeBuckets(
  linearBuckets(0.25, 0.25, 2),
  linearBuckets(1, 1, 59),
  linearBuckets(60, 5, 12),
  linearBuckets(120, 30, 7),
);

export interface PromProxyMetricsOptions {
  /**
   * The proxy mode. It no longer decides anything: each backend defines its mode's metrics through
   * the MetricsRegistry API when it registers, as upstream's RegisterMetrics(mode) would.
   * @deprecated Left out by new callers.
   */
  readonly mode?: string;
  readonly clock?: Clock;
  /** Export the process_* / nodejs_* runtime metrics as well (default true). */
  readonly defaultMetrics?: boolean;
}

const FAMILY = ['ip_family'] as const;

/**
 * ProxyMetrics on prom-client, in a private Registry (never the global one, so tests and several
 * instances do not collide). Names, types, labels, buckets and help texts follow upstream v1.34;
 * component-base prints ALPHA metrics' help with an "[ALPHA] " prefix, and so do we.
 */
export class PromProxyMetrics implements ProxyMetrics, MetricsRegistry {
  readonly registry = new Registry();
  private readonly clock: Clock;
  /** Metrics defined through the MetricsRegistry API, by full name. */
  private readonly defined = new Map<string, { readonly kind: string; readonly signature: string; readonly metric: Metric }>();

  private readonly syncLatency = histogram('sync_proxy_rules_duration_seconds', 'SyncProxyRules latency in seconds', FAMILY, SYNC_DURATION_BUCKETS);
  private readonly lastTimestamp = gauge('sync_proxy_rules_last_timestamp_seconds', 'The last time proxy rules were successfully synced', FAMILY);
  private readonly lastQueuedTimestamp = gauge('sync_proxy_rules_last_queued_timestamp_seconds', 'The last time a sync of proxy rules was queued', FAMILY);
  private readonly programmingLatency = histogram(
    'network_programming_duration_seconds',
    'In Cluster Network Programming Latency in seconds',
    FAMILY,
    NETWORK_PROGRAMMING_BUCKETS,
  );
  private readonly endpointPending = gauge('sync_proxy_rules_endpoint_changes_pending', 'Pending proxy rules Endpoint changes', []);
  private readonly endpointTotal = counter('sync_proxy_rules_endpoint_changes_total', 'Cumulative proxy rules Endpoint changes', []);
  private readonly servicePending = gauge('sync_proxy_rules_service_changes_pending', 'Pending proxy rules Service changes', []);
  private readonly serviceTotal = counter('sync_proxy_rules_service_changes_total', 'Cumulative proxy rules Service changes', []);
  private readonly noLocal = gauge(
    'sync_proxy_rules_no_local_endpoints_total',
    'Number of services with a Local traffic policy and no endpoints',
    ['ip_family', 'traffic_policy'],
  );
  /** Userspace mode (kube-proxy-ts's own names: upstream's userspace proxier exported none). */
  private readonly socketSources = new Map<IPFamily, () => ProxySocketStats>();
  private readonly socketMetrics: readonly Metric[] = [
    this.socketMetric('counter', 'userspace_connections_accepted_total', 'TCP connections accepted by userspace proxy sockets', (s) => s.tcpAccepted),
    this.socketMetric('gauge', 'userspace_connections_active', 'TCP connections being proxied by userspace proxy sockets', (s) => s.tcpActive),
    this.socketMetric('counter', 'userspace_connections_rejected_total', 'TCP connections reset because no endpoint could be reached', (s) => s.tcpRejected),
    this.socketMetric('counter', 'userspace_endpoint_dial_failures_total', 'Connects to an endpoint that failed or timed out (each was retried on another endpoint or given up)', (s) => s.endpointDialFailures),
    this.socketMetric('counter', 'userspace_udp_associations_total', 'UDP client associations opened by userspace proxy sockets', (s) => s.udpAssociationsOpened),
    this.socketMetric('gauge', 'userspace_udp_associations_active', 'UDP client associations currently open', (s) => s.udpAssociationsActive),
    this.socketMetric('counter', 'userspace_udp_dropped_total', 'UDP datagrams dropped by userspace proxy sockets (no endpoint, or queue full)', (s) => s.udpDropped),
  ];
  private readonly healthzTotal = counter('proxy_healthz_total', 'Cumulative proxy healthz HTTP status', ['code']);
  private readonly livezTotal = counter('proxy_livez_total', 'Cumulative proxy livez HTTP status', ['code']);
  /** kube-proxy-ts's own: objects the sources refused to deliver (validation at the edge). */
  private readonly invalidObjects = counter('invalid_objects_total', 'Objects (Services, EndpointSlices, Nodes) skipped because they failed validation', ['kind']);
  /** iptables mode: upstream's custom collectors over the nfacct counters (registered per scrape, see scrape()). */
  private readonly nfacctMetrics = Object.entries(NFACCT_COUNTER_METRICS).map(([name, m]) => ({ name, metric: counter(m.metric, m.help, []) }));
  private nfacctRead: (() => Promise<NfacctPacketCounts>) | undefined;
  /** Reads a backend asked for before each scrape (MetricsRegistry.beforeScrape). */
  private readonly refreshers: Array<() => Promise<void>> = [];

  constructor(options: PromProxyMetricsOptions) {
    this.clock = options.clock ?? systemClock;
    const exported: Metric[] = [
      // Every mode.
      this.syncLatency,
      this.lastQueuedTimestamp,
      this.lastTimestamp,
      this.endpointPending,
      this.endpointTotal,
      this.servicePending,
      this.serviceTotal,
      this.healthzTotal,
      this.livezTotal,
      this.invalidObjects,
      // Every mode but winkernel (out of scope here).
      this.programmingLatency,
      this.noLocal,
    ];
    for (const m of exported) this.registry.registerMetric(m);
    // Every kind is exported from the start (at 0), so a dashboard can tell "none refused" from "not reported".
    for (const kind of ['Service', 'EndpointSlice', 'Node'] as const) this.invalidObjects.inc({ kind }, 0);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  counter(definition: MetricDefinition): CounterHandle {
    const metric = this.define('counter', definition, () => counter(definition.name, definition.help, definition.labelNames ?? [])) as Counter;
    return { inc: (labels = {}, value = 1) => metric.inc(labels, value) };
  }

  gauge(definition: MetricDefinition): GaugeHandle {
    const metric = this.define('gauge', definition, () => gauge(definition.name, definition.help, definition.labelNames ?? [])) as Gauge;
    return { set: (labels, value) => metric.set(labels, value) };
  }

  histogram(definition: HistogramDefinition): HistogramHandle {
    const make = (): Histogram =>
      definition.buckets === undefined
        ? new Histogram({ name: fullName(definition.name), help: alpha(definition.help), labelNames: [...(definition.labelNames ?? [])], registers: [] })
        : histogram(definition.name, definition.help, definition.labelNames ?? [], definition.buckets);
    const metric = this.define('histogram', definition, make) as Histogram;
    return { observe: (labels, value) => metric.observe(labels, value) };
  }

  /** Registers a metric defined through the MetricsRegistry API once; the same definition again gets the same metric. */
  private define(kind: string, definition: MetricDefinition | HistogramDefinition, make: () => Metric): Metric {
    const name = fullName(definition.name);
    const signature = JSON.stringify([definition.help, definition.labelNames ?? [], 'buckets' in definition ? definition.buckets : undefined]);
    const existing = this.defined.get(name);
    if (existing !== undefined) {
      if (existing.kind === kind && existing.signature === signature) return existing.metric;
      throw new Error(`metric ${name} is already defined differently (as a ${existing.kind})`);
    }
    if (this.registry.getSingleMetric(name) !== undefined || this.isBuiltIn(name)) throw new Error(`metric ${name} is one of the host's own metrics`);
    const metric = make();
    this.registry.registerMetric(metric);
    this.defined.set(name, { kind, signature, metric });
    return metric;
  }

  /** Whether `name` is one of the metrics this class defines itself (exported in some mode or not). */
  private isBuiltIn(name: string): boolean {
    const own: unknown[] = [...Object.values(this), ...this.socketMetrics, ...this.nfacctMetrics.map((n) => n.metric)];
    return own.some((v) => (v instanceof Counter || v instanceof Gauge || v instanceof Histogram) && (v as unknown as { name: string }).name === name);
  }

  /** The text exposition format and its Content-Type, for GET /metrics. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    await this.collectNfacct();
    await Promise.all(this.refreshers.map((refresh) => refresh().catch(() => undefined)));
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  beforeScrape(refresh: () => Promise<void>): void {
    this.refreshers.push(refresh);
  }

  nfacctCounters(read: () => Promise<NfacctPacketCounts>): void {
    this.nfacctRead = read;
  }

  /**
   * Reads the nfacct counters and exports exactly those that could be read, as upstream's collectors
   * (a counter that is missing yields no sample, so its metric is absent from the page).
   */
  private async collectNfacct(): Promise<void> {
    if (this.nfacctRead === undefined) return;
    let counts: NfacctPacketCounts;
    try {
      counts = await this.nfacctRead();
    } catch {
      counts = {};
    }
    for (const { name, metric } of this.nfacctMetrics) {
      const packets = counts[name];
      if (packets === undefined || !Number.isFinite(packets) || packets < 0) {
        this.registry.removeSingleMetric((metric as unknown as { name: string }).name);
        continue;
      }
      metric.reset();
      metric.inc(packets);
      this.registry.registerMetric(metric);
    }
  }

  syncQueued(family: IPFamily): void {
    this.lastQueuedTimestamp.set({ ip_family: family }, this.nowSeconds());
  }

  syncDuration(family: IPFamily, seconds: number, kind?: SyncKind): void {
    this.syncLatency.observe({ ip_family: family }, seconds);
    // The full/partial histograms are the mode's (iptables and nftables define them).
    if (kind !== undefined) this.lookup<Histogram>(`sync_${kind}_proxy_rules_duration_seconds`)?.observe({ ip_family: family }, seconds);
  }

  syncSucceeded(family: IPFamily): void {
    this.lastTimestamp.set({ ip_family: family }, this.nowSeconds());
  }

  networkProgrammingLatency(family: IPFamily, seconds: number): void {
    this.programmingLatency.observe({ ip_family: family }, seconds);
  }

  noLocalEndpoints(family: IPFamily, counts: { readonly internal: number; readonly external: number }): void {
    this.noLocal.set({ ip_family: family, traffic_policy: 'internal' }, counts.internal);
    this.noLocal.set({ ip_family: family, traffic_policy: 'external' }, counts.external);
  }

  serviceChangeSeen(): void {
    this.serviceTotal.inc();
  }

  serviceChangesPending(count: number): void {
    this.servicePending.set(count);
  }

  endpointChangeSeen(): void {
    this.endpointTotal.inc();
  }

  endpointChangesPending(count: number): void {
    this.endpointPending.set(count);
  }

  // The mode-specific methods of ProxyMetrics (v1): each updates the metric of that name if the
  // mode's backend defined it through the MetricsRegistry API, and is ignored otherwise, as
  // upstream ignores metrics its RegisterMetrics(mode) did not register.

  iptablesRestoreFailed(family: IPFamily, partial: boolean): void {
    this.lookup<Counter>('sync_proxy_rules_iptables_restore_failures_total')?.inc({ ip_family: family });
    if (partial) this.lookup<Counter>('sync_proxy_rules_iptables_partial_restore_failures_total')?.inc({ ip_family: family });
  }

  nftablesSyncFailed(family: IPFamily): void {
    this.lookup<Counter>('sync_proxy_rules_nftables_sync_failures_total')?.inc({ ip_family: family });
  }

  nftablesCleanupFailed(family: IPFamily): void {
    this.lookup<Counter>('sync_proxy_rules_nftables_cleanup_failures_total')?.inc({ ip_family: family });
  }

  nftablesServiceFailed(family: IPFamily): void {
    this.lookup<Counter>('sync_proxy_rules_nftables_failed_services_total')?.inc({ ip_family: family });
  }

  iptablesRules(family: IPFamily, table: IptablesTable, counts: { readonly total: number; readonly last: number }): void {
    this.lookup<Gauge>('sync_proxy_rules_iptables_total')?.set({ ip_family: family, table }, counts.total);
    this.lookup<Gauge>('sync_proxy_rules_iptables_last')?.set({ ip_family: family, table }, counts.last);
  }

  /** A metric defined through the MetricsRegistry API, by its name after `kubeproxy_`. */
  private lookup<M extends Metric>(name: string): M | undefined {
    return this.defined.get(fullName(name))?.metric as M | undefined;
  }

  proxySockets(family: IPFamily, read: () => ProxySocketStats): void {
    // Exported from the first source on (userspace mode is the one that has sockets).
    if (this.socketSources.size === 0) for (const m of this.socketMetrics) this.registry.registerMetric(m);
    this.socketSources.set(family, read);
  }

  healthzResponse(code: number): void {
    this.healthzTotal.inc({ code: String(code) });
  }

  livezResponse(code: number): void {
    this.livezTotal.inc({ code: String(code) });
  }

  invalidObject(kind: InvalidObjectKind): void {
    this.invalidObjects.inc({ kind });
  }

  /** A metric whose value per family is read from the registered socket stats at scrape time. */
  private socketMetric(kind: 'counter' | 'gauge', name: string, help: string, pick: (s: ProxySocketStats) => number): Metric {
    const sources = this.socketSources;
    const config = {
      name: fullName(name),
      help: alpha(help),
      labelNames: FAMILY,
      registers: [],
      collect(this: Counter | Gauge): void {
        this.reset();
        for (const [family, read] of sources) {
          const value = pick(read());
          if (this instanceof Counter) this.inc({ ip_family: family }, value);
          else this.set({ ip_family: family }, value);
        }
      },
    };
    return kind === 'counter' ? new Counter(config) : new Gauge(config);
  }

  private nowSeconds(): number {
    return this.clock.now() / 1000;
  }
}

// Metrics are created unregistered (`registers: []`); the constructor registers the mode's set.

function fullName(name: string): string {
  return `${KUBE_PROXY_SUBSYSTEM}_${name}`;
}

function alpha(help: string): string {
  return `[ALPHA] ${help}`;
}

function histogram(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]): Histogram {
  return new Histogram({ name: fullName(name), help: alpha(help), labelNames, buckets: [...buckets], registers: [] });
}

function gauge(name: string, help: string, labelNames: readonly string[]): Gauge {
  return new Gauge({ name: fullName(name), help: alpha(help), labelNames, registers: [] });
}

function counter(name: string, help: string, labelNames: readonly string[]): Counter {
  return new Counter({ name: fullName(name), help: alpha(help), labelNames, registers: [] });
}
