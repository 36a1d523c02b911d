import type { IPFamily } from '../../semantics/model/protocol.js';

/**
 * Health-check node ports for Services with externalTrafficPolicy=Local (upstream's
 * ServiceHealthServer). Load balancers probe them to learn whether this node has local endpoints.
 * Keys are namespaced names (`namespace/name`). Both methods never reject: failures are logged.
 *
 * Dual-stack proxiers share one server and pass their family, so one family's sync does not close
 * listeners or zero counts that the other family still reports.
 */
export interface ServiceHealthServer {
  /** Listen for exactly these services (value: healthCheckNodePort); close the others. */
  syncServices(services: ReadonlyMap<string, number>, family?: IPFamily): Promise<void>;
  /** Local ready endpoint counts; a listening service missing from the map has 0. */
  syncEndpoints(endpoints: ReadonlyMap<string, number>, family?: IPFamily): Promise<void>;
}

export const SERVICE_HEALTH_SERVER = Symbol.for('kube-proxy.ServiceHealthServer');
