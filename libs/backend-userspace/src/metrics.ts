import type { MetricsRegistry } from '@kube-proxy/core';
import { IPTABLES_RESTORE_FAILURES, IPTABLES_RULES_LAST, IPTABLES_RULES_TOTAL } from '@kube-proxy/netfilter-iptables';

/**
 * userspace mode's metrics: its capture rules are restored with iptables-restore too (failures, rule
 * counts); the proxy sockets' totals come with ProxyMetrics.proxySockets.
 */
export function defineUserspaceModeMetrics(registry: MetricsRegistry): void {
  registry.counter(IPTABLES_RESTORE_FAILURES);
  registry.gauge(IPTABLES_RULES_TOTAL);
  registry.gauge(IPTABLES_RULES_LAST);
}

