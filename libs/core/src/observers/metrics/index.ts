export {
  type InvalidObjectKind,
  type IptablesTable,
  NFACCT_COUNTER_METRICS,
  type NfacctPacketCounts,
  PROXY_METRICS,
  type ProxyMetrics,
  type ProxySocketStats,
  type SyncKind,
} from './proxy-metrics.js';
export { exponentialBuckets, linearBuckets, mergeBuckets } from './buckets.js';
export {
  KUBE_PROXY_SUBSYSTEM,
  NETWORK_PROGRAMMING_BUCKETS,
  PromProxyMetrics,
  type PromProxyMetricsOptions,
  SYNC_DURATION_BUCKETS,
} from './prom-proxy-metrics.js';
export {
  METRICS_REGISTRY,
  type CounterHandle,
  type GaugeHandle,
  type HistogramDefinition,
  type HistogramHandle,
  type MetricDefinition,
  type MetricLabels,
  type MetricsRegistry,
} from './metrics-registry.js';
export { SYNC_FULL_DURATION, SYNC_PARTIAL_DURATION } from './sync-kind-metrics.js';
