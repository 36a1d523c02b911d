import type { MetricsRegistry } from '../observers/metrics/metrics-registry.js';
import { SYNC_FULL_DURATION, SYNC_PARTIAL_DURATION } from '../observers/metrics/sync-kind-metrics.js';

/*
 * For specs: the mode-specific metrics upstream's RegisterMetrics(mode) adds (pkg/proxy/metrics,
 * v1.34), written out here rather than taken from the backends (which core cannot import), so core's
 * metric specs can run a mode's set and each backend's spec can check that its own definitions are
 * exactly these.
 */

const FAMILY = ['ip_family'];
const RESTORE_FAILURES = { name: 'sync_proxy_rules_iptables_restore_failures_total', help: 'Cumulative proxy iptables restore failures', labelNames: FAMILY };
const PARTIAL_RESTORE_FAILURES = {
  name: 'sync_proxy_rules_iptables_partial_restore_failures_total',
  help: 'Cumulative proxy iptables partial restore failures',
  labelNames: FAMILY,
};
const RULES_TOTAL = { name: 'sync_proxy_rules_iptables_total', help: 'Total number of iptables rules owned by kube-proxy', labelNames: ['ip_family', 'table'] };
const RULES_LAST = { name: 'sync_proxy_rules_iptables_last', help: 'Number of iptables rules written by kube-proxy in last sync', labelNames: ['ip_family', 'table'] };

/** Defines in `registry` what upstream exports in `mode` beyond every mode's metrics (nothing for other modes). */
export function defineUpstreamModeMetrics(registry: MetricsRegistry, mode: string): MetricsRegistry {
  if (mode === 'iptables') {
    registry.histogram(SYNC_FULL_DURATION);
    registry.histogram(SYNC_PARTIAL_DURATION);
    registry.counter(RESTORE_FAILURES);
    registry.counter(PARTIAL_RESTORE_FAILURES);
    registry.gauge(RULES_TOTAL);
    registry.gauge(RULES_LAST);
  } else if (mode === 'nftables') {
    registry.histogram(SYNC_FULL_DURATION);
    registry.histogram(SYNC_PARTIAL_DURATION);
    registry.counter({ name: 'sync_proxy_rules_nftables_sync_failures_total', help: 'Cumulative proxy nftables sync failures', labelNames: FAMILY });
    registry.counter({ name: 'sync_proxy_rules_nftables_cleanup_failures_total', help: 'Cumulative proxy nftables cleanup failures', labelNames: FAMILY });
    // kube-proxy-ts's own (upstream has none).
    registry.counter({
      name: 'sync_proxy_rules_nftables_failed_services_total',
      help: 'Cumulative service ports whose rules nft refused; each was left out of the retry until it changes or the next full sync',
      labelNames: FAMILY,
    });
  } else if (mode === 'ipvs') {
    registry.counter(RESTORE_FAILURES);
  } else if (mode === 'userspace') {
    // The capture rules are restored with iptables-restore too.
    registry.counter(RESTORE_FAILURES);
    registry.gauge(RULES_TOTAL);
    registry.gauge(RULES_LAST);
  }
  return registry;
}
