import type { Endpoint } from '../model/endpoint.js';
import type { ServicePortName } from '../model/service-port-name.js';
import type { EndpointsChangeTracker } from './endpoints-change-tracker.js';
import type { ServiceEndpoints } from './endpoints-change.js';
import { ReadonlyMapView } from './readonly-map-view.js';
import { detectStaleConntrackEntries } from './stale-conntrack.js';
import type { EndpointsMap, ServiceEndpoint, UpdateEndpointsMapResult } from './types.js';

/**
 * The endpoints of every service port, keyed by ServicePortName.key (upstream's EndpointsMap), plus
 * per-Service counts of local ready endpoints, maintained per changed Service instead of rebuilt
 * per sync.
 */
export class MutableEndpointsMap extends ReadonlyMapView<string, readonly Endpoint[]> implements EndpointsMap {
  private readonly portNames = new Map<string, ServicePortName>();
  private readonly localReady = new Map<string, number>();

  /**
   * Applies and drains the tracker's pending changes, reporting which Services changed, the UDP
   * endpoints and services whose conntrack entries may be stale, and the collected trigger times.
   */
  update(tracker: EndpointsChangeTracker): UpdateEndpointsMapResult {
    const updatedServices = new Set<string>();
    const deletedUDPEndpoints: ServiceEndpoint[] = [];
    const newlyActiveUDPServices: ServicePortName[] = [];
    for (const [service, change] of tracker.checkoutChanges()) {
      updatedServices.add(service);
      for (const key of change.previous.keys()) {
        this.entriesByKey.delete(key);
        this.portNames.delete(key);
      }
      for (const [key, { name, endpoints }] of change.current) {
        this.entriesByKey.set(key, endpoints);
        this.portNames.set(key, name);
      }
      detectStaleConntrackEntries(change.previous, change.current, deletedUDPEndpoints, newlyActiveUDPServices);
      const count = countLocalReadyIPs(change.current);
      if (count === 0) this.localReady.delete(service);
      else this.localReady.set(service, count);
    }
    return {
      updatedServices,
      deletedUDPEndpoints,
      newlyActiveUDPServices,
      lastChangeTriggerTimes: tracker.checkoutTriggerTimes(),
    };
  }

  /** The ServicePortName behind a key of this map. */
  portName(key: string): ServicePortName | undefined {
    return this.portNames.get(key);
  }

  /**
   * Number of distinct local ready endpoint IPs per namespaced name, for health-check node ports.
   * Terminating endpoints do not count, so a node whose only endpoints are terminating fails its
   * health check and load balancers drain it.
   */
  localReadyEndpoints(): Map<string, number> {
    return new Map(this.localReady);
  }
}

/** Counted by IP, not ip:port: a pod serving ports 80 and 443 is one endpoint. */
function countLocalReadyIPs(ports: ServiceEndpoints): number {
  let ips: Set<string> | undefined;
  for (const { endpoints } of ports.values()) {
    for (const ep of endpoints) {
      if (ep.ready && ep.isLocal) (ips ??= new Set()).add(ep.ip);
    }
  }
  return ips?.size ?? 0;
}
