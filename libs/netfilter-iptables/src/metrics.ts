import type { MetricDefinition } from '@kube-proxy/core';

/*
 * Upstream's iptables metrics (pkg/proxy/metrics), defined by each backend that writes with
 * iptables-restore when it registers: restore failures (iptables, IPVS and userspace mode) and the
 * rule counts (iptables and userspace mode). ProxyMetrics' iptablesRestoreFailed / iptablesRules
 * feed them once defined.
 */

export const IPTABLES_RESTORE_FAILURES: MetricDefinition = {
  name: 'sync_proxy_rules_iptables_restore_failures_total',
  help: 'Cumulative proxy iptables restore failures',
  labelNames: ['ip_family'],
};

export const IPTABLES_PARTIAL_RESTORE_FAILURES: MetricDefinition = {
  name: 'sync_proxy_rules_iptables_partial_restore_failures_total',
  help: 'Cumulative proxy iptables partial restore failures',
  labelNames: ['ip_family'],
};

export const IPTABLES_RULES_TOTAL: MetricDefinition = {
  name: 'sync_proxy_rules_iptables_total',
  help: 'Total number of iptables rules owned by kube-proxy',
  labelNames: ['ip_family', 'table'],
};

export const IPTABLES_RULES_LAST: MetricDefinition = {
  name: 'sync_proxy_rules_iptables_last',
  help: 'Number of iptables rules written by kube-proxy in last sync',
  labelNames: ['ip_family', 'table'],
};
