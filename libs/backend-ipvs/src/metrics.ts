import type { MetricsRegistry } from '@kube-proxy/core';
import { IPTABLES_RESTORE_FAILURES } from '@kube-proxy/netfilter-iptables';

/** IPVS mode's metrics, as upstream's RegisterMetrics(ProxyModeIPVS) adds them: its iptables skeleton's restore failures. */
export function defineIpvsModeMetrics(registry: MetricsRegistry): void {
  registry.counter(IPTABLES_RESTORE_FAILURES);
}

