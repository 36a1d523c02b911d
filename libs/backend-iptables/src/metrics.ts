import { SYNC_FULL_DURATION, SYNC_PARTIAL_DURATION, type MetricsRegistry } from '@kube-proxy/core';
import { IPTABLES_PARTIAL_RESTORE_FAILURES, IPTABLES_RESTORE_FAILURES, IPTABLES_RULES_LAST, IPTABLES_RULES_TOTAL } from '@kube-proxy/netfilter-iptables';

/** iptables mode's metrics, as upstream's RegisterMetrics(ProxyModeIPTables) adds them (nfacct's come with the nfacct reader). */
export function defineIptablesModeMetrics(registry: MetricsRegistry): void {
  registry.histogram(SYNC_FULL_DURATION);
  registry.histogram(SYNC_PARTIAL_DURATION);
  registry.counter(IPTABLES_RESTORE_FAILURES);
  registry.counter(IPTABLES_PARTIAL_RESTORE_FAILURES);
  registry.gauge(IPTABLES_RULES_TOTAL);
  registry.gauge(IPTABLES_RULES_LAST);
}

