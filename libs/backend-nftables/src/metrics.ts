import { SYNC_FULL_DURATION, SYNC_PARTIAL_DURATION, type MetricDefinition, type MetricsRegistry } from '@kube-proxy/core';

export const NFTABLES_SYNC_FAILURES: MetricDefinition = {
  name: 'sync_proxy_rules_nftables_sync_failures_total',
  help: 'Cumulative proxy nftables sync failures',
  labelNames: ['ip_family'],
};

export const NFTABLES_CLEANUP_FAILURES: MetricDefinition = {
  name: 'sync_proxy_rules_nftables_cleanup_failures_total',
  help: 'Cumulative proxy nftables cleanup failures',
  labelNames: ['ip_family'],
};

/** kube-proxy-ts's own: service ports nft refused a transaction on (each left out of the retry). */
export const NFTABLES_FAILED_SERVICES: MetricDefinition = {
  name: 'sync_proxy_rules_nftables_failed_services_total',
  help: 'Cumulative service ports whose rules nft refused; each was left out of the retry until it changes or the next full sync',
  labelNames: ['ip_family'],
};

/** nftables mode's metrics, as upstream's RegisterMetrics(ProxyModeNFTables) adds them, and our failed-services counter. */
export function defineNftablesModeMetrics(registry: MetricsRegistry): void {
  registry.histogram(SYNC_FULL_DURATION);
  registry.histogram(SYNC_PARTIAL_DURATION);
  registry.counter(NFTABLES_SYNC_FAILURES);
  registry.counter(NFTABLES_CLEANUP_FAILURES);
  registry.counter(NFTABLES_FAILED_SERVICES);
}

