import type { HistogramDefinition } from './metrics-registry.js';
import { SYNC_DURATION_BUCKETS } from './prom-proxy-metrics.js';

/*
 * Upstream's full/partial sync latencies, for a mode whose syncs are full or partial (iptables and
 * nftables define them when they register). ProxyMetrics.syncDuration(family, seconds, kind) feeds
 * them once defined.
 */

export const SYNC_FULL_DURATION: HistogramDefinition = {
  name: 'sync_full_proxy_rules_duration_seconds',
  help: 'SyncProxyRules latency in seconds for full resyncs',
  labelNames: ['ip_family'],
  buckets: SYNC_DURATION_BUCKETS,
};

export const SYNC_PARTIAL_DURATION: HistogramDefinition = {
  name: 'sync_partial_proxy_rules_duration_seconds',
  help: 'SyncProxyRules latency in seconds for partial resyncs',
  labelNames: ['ip_family'],
  buckets: SYNC_DURATION_BUCKETS,
};
