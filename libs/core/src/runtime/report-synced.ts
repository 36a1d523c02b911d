import type { ProxyMetrics } from '../observers/metrics/proxy-metrics.js';
import type { IPFamily } from '../semantics/model/protocol.js';
import type { Logger } from '../host/logger.js';
import type { AppliedChanges } from '../semantics/tracking/types.js';
import type { ProxierObservers } from './observers.js';

export interface SyncedReport {
  readonly family: IPFamily;
  /** The changes the successful sync applied (their EndpointSlice trigger times give the latency). */
  readonly applied: AppliedChanges;
  /** When the rules were in place (ms since epoch, by the proxier's clock). */
  readonly now: number;
  readonly noLocalEndpoints: { readonly internal: number; readonly external: number };
  /** Health-check node ports by service, and local ready endpoints by service. */
  readonly healthChecks: { readonly services: ReadonlyMap<string, number>; readonly localEndpoints: ReadonlyMap<string, number> };
  /** Mode-specific gauges (e.g. iptables rule counts), published right after the shared ones. */
  readonly modeMetrics?: (metrics: ProxyMetrics) => void;
}

/**
 * What upstream's syncProxyRules publishes after a successful sync, in its order, for every kernel
 * mode: network programming latency of the EndpointSlice changes applied, the no-local-endpoints
 * gauge (and the mode's own gauges), health "updated", the last-sync timestamp, then the Services'
 * health-check ports and local endpoint counts. A failing health server is logged: the rules are in
 * place whatever happens there.
 */
export function reportSuccessfulSync(observers: ProxierObservers, report: SyncedReport, logger: Logger): Promise<void> {
  return publishSuccessfulSync(observers, report, logger);
}

/** The engine's report: as SyncedReport, but a mode without the no-local-endpoints notion (userspace) leaves that gauge alone. */
export interface SuccessReport extends Omit<SyncedReport, 'noLocalEndpoints'> {
  readonly noLocalEndpoints?: SyncedReport['noLocalEndpoints'];
}

/** reportSuccessfulSync for a SuccessReport (the one sync engine calls this). */
export async function publishSuccessfulSync(observers: ProxierObservers, report: SuccessReport, logger: Logger): Promise<void> {
  const { metrics, health, serviceHealth } = observers;
  const { family, applied, now } = report;
  if (metrics) {
    for (const times of applied.endpoints.lastChangeTriggerTimes.values()) {
      for (const t of times) metrics.networkProgrammingLatency(family, (now - t) / 1000);
    }
    if (report.noLocalEndpoints) metrics.noLocalEndpoints(family, report.noLocalEndpoints);
    report.modeMetrics?.(metrics);
  }
  health?.updated(family);
  metrics?.syncSucceeded(family);
  if (serviceHealth) {
    try {
      await serviceHealth.syncServices(report.healthChecks.services, family);
      await serviceHealth.syncEndpoints(report.healthChecks.localEndpoints, family);
    } catch (err) {
      logger.error('Error syncing healthcheck services', { err: String(err) });
    }
  }
}
