import type { Endpoint } from '../model/endpoint.js';
import type { ServicePort } from '../model/service-port.js';
import type { ServicePortName } from '../model/service-port-name.js';

/** All service ports a proxier currently serves, keyed by ServicePortName.key. */
export type ServicePortMap = ReadonlyMap<string, ServicePort>;

/** All endpoints of each service port, keyed by ServicePortName.key, de-duplicated across slices. */
export type EndpointsMap = ReadonlyMap<string, readonly Endpoint[]>;

/** What ServicePortMap.update() changed: upstream's UpdateServiceMapResult. */
export interface UpdateServiceMapResult {
  /** Namespaced names (`ns/name`) of services whose ports changed, were added or removed. */
  readonly updatedServices: ReadonlySet<string>;
  /** Cluster IPs of UDP service ports that went away (their conntrack entries must be flushed). */
  readonly deletedUDPClusterIPs: ReadonlySet<string>;
}

/** One endpoint of one service port, as reported for conntrack cleanup. */
export interface ServiceEndpoint {
  /** Endpoint.key (`ip:port`). */
  readonly endpoint: string;
  readonly servicePortName: ServicePortName;
}

/** What EndpointsMap.update() changed: upstream's UpdateEndpointsMapResult. */
export interface UpdateEndpointsMapResult {
  readonly updatedServices: ReadonlySet<string>;
  /** UDP endpoints that were removed or stopped being ready (stale conntrack entries to delete). */
  readonly deletedUDPEndpoints: readonly ServiceEndpoint[];
  /** UDP service ports that went from no ready endpoints to some (stale "no endpoint" entries to delete). */
  readonly newlyActiveUDPServices: readonly ServicePortName[];
  /** EndpointSlice trigger times (ms since epoch) per namespaced name, for the programming-latency metric. */
  readonly lastChangeTriggerTimes: ReadonlyMap<string, readonly number[]>;
}

/** Result of draining all pending changes into the maps. */
export interface AppliedChanges {
  readonly services: UpdateServiceMapResult;
  readonly endpoints: UpdateEndpointsMapResult;
}
