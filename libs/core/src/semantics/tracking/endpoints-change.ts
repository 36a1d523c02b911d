import type { Endpoint } from '../model/endpoint.js';
import type { ServicePortName } from '../model/service-port-name.js';

/** The endpoints of one service port, with the port's identity kept for result reporting. */
export interface PortEndpoints {
  readonly name: ServicePortName;
  readonly endpoints: readonly Endpoint[];
}

/** All ports of one Service that have endpoints, keyed by ServicePortName.key. */
export type ServiceEndpoints = ReadonlyMap<string, PortEndpoints>;

/** One Service's endpoints before and after the changes accumulated since the last sync. */
export interface EndpointsChange {
  readonly previous: ServiceEndpoints;
  readonly current: ServiceEndpoints;
}

export const NO_SERVICE_ENDPOINTS: ServiceEndpoints = new Map();
