import type { DependencyContainer } from 'tsyringe';
import { PROXIER_HEALTH_UPDATER, type ProxierHealthUpdater } from '../observers/health/proxier-health-updater.js';
import { SERVICE_HEALTH_SERVER, type ServiceHealthServer } from '../observers/health/service-health-server.js';
import { PROXY_METRICS, type ProxyMetrics } from '../observers/metrics/proxy-metrics.js';

/** The node agent's parts a proxier reports to; each is absent when the host app provides none. */
export interface ProxierObservers {
  readonly health?: ProxierHealthUpdater;
  readonly metrics?: ProxyMetrics;
  readonly serviceHealth?: ServiceHealthServer;
}

/** A registration a backend can do without (a host app or test that provides no node agent). */
export function resolveOptional<T>(container: DependencyContainer, token: symbol): T | undefined {
  return container.isRegistered(token, true) ? container.resolve<T>(token) : undefined;
}

/** The observers the host app registered in `container`. */
export function resolveObservers(container: DependencyContainer): ProxierObservers {
  return {
    health: resolveOptional<ProxierHealthUpdater>(container, PROXIER_HEALTH_UPDATER),
    metrics: resolveOptional<ProxyMetrics>(container, PROXY_METRICS),
    serviceHealth: resolveOptional<ServiceHealthServer>(container, SERVICE_HEALTH_SERVER),
  };
}
