import type { AppliedChanges, IPFamily, Logger, ProxierObservers } from '@kube-proxy/core';
import { reportSuccessfulSync as reportSynced } from '@kube-proxy/core';
import type { IptablesProxierStats } from './iptables-proxier.js';

/** The agent's parts a proxier reports to (core's ProxierObservers). */
export type SyncObservers = ProxierObservers;

/**
 * Core's report of a successful sync (upstream's order), with this mode's gauges: the rule counts
 * per table (sync_proxy_rules_iptables_total / _last), taken from the proxier's stats.
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
  await reportSynced(
    observers,
    {
      family,
      applied,
      now,
      noLocalEndpoints: stats.noLocalEndpoints,
      healthChecks,
      modeMetrics: (metrics) => {
        metrics.iptablesRules(family, 'filter', { total: stats.filterRulesTotal, last: stats.filterRulesLast });
        metrics.iptablesRules(family, 'nat', { total: stats.natRulesTotal, last: stats.natRulesLast });
      },
    },
    logger,
  );
}
