import type { AppliedChanges, IPFamily, Logger, ProxierObservers } from '@kube-proxy/core';
import type { IptablesProxierStats } from './iptables-proxier.js';

/** The agent's parts a proxier reports to (core's ProxierObservers). */
export type SyncObservers = ProxierObservers;

/**
 * What upstream's syncProxyRules publishes after a successful restore, in its order: network
 * programming latency of the EndpointSlice changes this sync applied, the no-local-endpoints and
 * rule-count gauges (taken from the proxier's stats, which already hold them), health "updated",
 * the last-sync timestamp, then the Services' health-check ports and local endpoint counts.
 */
export async function reportSuccessfulSync(
  observers: SyncObservers,
  family: IPFamily,
  stats: Readonly<IptablesProxierStats>,
  applied: AppliedChanges,
  now: number,
  healthChecks: { readonly services: ReadonlyMap<string, number>; readonly localEndpoints: ReadonlyMap<string, number> },
  logger: Logger,
): Promise<void> {
  const { metrics, health, serviceHealth } = observers;
  if (metrics) {
    for (const times of applied.endpoints.lastChangeTriggerTimes.values()) {
      for (const t of times) metrics.networkProgrammingLatency(family, (now - t) / 1000);
    }
    metrics.noLocalEndpoints(family, stats.noLocalEndpoints);
    metrics.iptablesRules(family, 'filter', { total: stats.filterRulesTotal, last: stats.filterRulesLast });
    metrics.iptablesRules(family, 'nat', { total: stats.natRulesTotal, last: stats.natRulesLast });
  }
  health?.updated(family);
  metrics?.syncSucceeded(family);
  if (serviceHealth) {
    // The rules are in place whatever happens here: a failing health server must not fail the sync.
    try {
      await serviceHealth.syncServices(healthChecks.services, family);
      await serviceHealth.syncEndpoints(healthChecks.localEndpoints, family);
    } catch (err) {
      logger.error('Error syncing healthcheck services', { err: String(err) });
    }
  }
}
