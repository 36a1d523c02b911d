/*
 * How a backend adds its own metrics to /metrics: a plugin's register() resolves METRICS_REGISTRY
 * from its container (optional, as every observer: absent in tests and when metrics are off) and
 * creates counters, gauges and histograms by name. The host prefixes each name with `kubeproxy_`
 * and each help text with component-base's "[ALPHA] " stability marker, as upstream's metrics.
 */

/** Label values by label name; every name listed in the metric's `labelNames`. */
export type MetricLabels = Readonly<Record<string, string>>;

export interface MetricDefinition {
  /** The name after the host's `kubeproxy_` prefix, e.g. `sync_proxy_rules_foo_failures_total`. */
  readonly name: string;
  /** What the metric counts; printed as `# HELP kubeproxy_<name> [ALPHA] <help>`. */
  readonly help: string;
  /** The label names every sample carries (none by default). */
  readonly labelNames?: readonly string[];
}

export interface HistogramDefinition extends MetricDefinition {
  /** Upper bounds of the buckets, ascending (prom-client's defaults when left out). */
  readonly buckets?: readonly number[];
}

export interface CounterHandle {
  /** Adds `value` (default 1, never negative) to the series of `labels`. */
  inc(labels?: MetricLabels, value?: number): void;
}

export interface GaugeHandle {
  /** Sets the series of `labels` to `value`. */
  set(labels: MetricLabels, value: number): void;
}

export interface HistogramHandle {
  /** Records one observation in the series of `labels`. */
  observe(labels: MetricLabels, value: number): void;
}

/**
 * The host's metric registry. Defining a name again with the same type, labels and help returns the
 * same metric (a backend registered twice, e.g. in tests, shares it); any other reuse of a name, the
 * host's own metrics included, throws.
 */
export interface MetricsRegistry {
  counter(definition: MetricDefinition): CounterHandle;
  gauge(definition: MetricDefinition): GaugeHandle;
  histogram(definition: HistogramDefinition): HistogramHandle;
  /**
   * Runs `refresh` before every scrape of /metrics (awaited; a failure leaves the values as they
   * were): for metrics read from the kernel rather than counted by the proxy, as upstream's
   * scrape-time collectors (e.g. nftables counters). Optional: a registry that is never scraped may
   * leave it out.
   */
  beforeScrape?(refresh: () => Promise<void>): void;
}

export const METRICS_REGISTRY = Symbol.for('kube-proxy.MetricsRegistry');
