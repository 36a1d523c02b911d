import type { V1EndpointSlice } from '@kubernetes/client-node';
import { joinHostPort, type Endpoint } from '../model/endpoint.js';
import type { IPFamily } from '../model/protocol.js';
import { servicePortName, type ServicePortName } from '../model/service-port-name.js';
import type { Logger } from '../../host/logger.js';
import {
  addressTypeOf,
  endpointSliceInfo,
  endpointSliceKeys,
  sliceInfoEquals,
  type SliceEndpoint,
  type SliceInfo,
  type SliceKeys,
} from './endpoint-slice-info.js';
import { NO_SERVICE_ENDPOINTS, type EndpointsChange, type PortEndpoints, type ServiceEndpoints } from './endpoints-change.js';

export interface EndpointSliceCacheOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  readonly logger: Logger;
}

/** A pending slice version: either new content or the slice's removal. */
interface SliceState {
  readonly info: SliceInfo | null;
}

const REMOVED: SliceState = { info: null };

/**
 * The slices of one Service: those already handed to the proxier (`applied`), those received since
 * (`pending`), and the endpoints computed from `applied`, kept so the next change does not recompute
 * its "previous" side.
 */
class ServiceSlices {
  readonly applied = new Map<string, SliceInfo>();
  readonly pending = new Map<string, SliceState>();
  appliedEndpoints: ServiceEndpoints = NO_SERVICE_ENDPOINTS;

  constructor(
    readonly namespace: string,
    readonly name: string,
  ) {}
}

/**
 * Caches EndpointSlices per Service and turns them into per-port endpoint lists (upstream's
 * EndpointSliceCache). Slices are kept per slice name because an endpoint may move from one slice to
 * another: dropping it with the slice it left would remove it from the Service for a while. Only the
 * Services with pending changes are visited at checkout, so a sync costs O(changed), not O(all).
 */
export class EndpointSliceCache {
  private readonly services = new Map<string, ServiceSlices>();
  private readonly pendingServices = new Set<string>();
  private readonly addressType: string;

  constructor(private readonly options: EndpointSliceCacheOptions) {
    this.addressType = addressTypeOf(options.family);
  }

  /**
   * Records a new version (or the removal) of a slice. Returns the slice's keys when it differs from
   * what is already pending or applied (a sync is needed), undefined when it changes nothing or is
   * ignored: another address type (including FQDN), or no service-name label.
   */
  updatePending(slice: V1EndpointSlice, remove: boolean): SliceKeys | undefined {
    const { logger, family } = this.options;
    if (slice?.addressType !== this.addressType) {
      logger.debug('Ignoring EndpointSlice of another address type', {
        endpointSlice: slice?.metadata?.name,
        addressType: slice?.addressType,
        expected: this.addressType,
      });
      return undefined;
    }
    const keys = endpointSliceKeys(slice);
    if (keys === undefined) {
      logger.warn('Ignoring EndpointSlice without a service-name label, name or namespace', {
        endpointSlice: `${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}`,
        field: 'metadata.labels[kubernetes.io/service-name]',
      });
      return undefined;
    }
    const state: SliceState = remove ? REMOVED : { info: endpointSliceInfo(slice, family, logger) };

    let tracker = this.services.get(keys.service);
    if (!stateChanged(tracker, keys.slice, state)) return undefined;
    if (tracker === undefined) {
      const slash = keys.service.indexOf('/');
      tracker = new ServiceSlices(keys.service.slice(0, slash), keys.service.slice(slash + 1));
      this.services.set(keys.service, tracker);
    }
    tracker.pending.set(keys.slice, state);
    this.pendingServices.add(keys.service);
    return keys;
  }

  /** Number of Services with slice changes not yet checked out. */
  pendingCount(): number {
    return this.pendingServices.size;
  }

  /** Namespaced names of the Services with pending slice changes. */
  pendingNames(): string[] {
    return [...this.pendingServices];
  }

  /** Applies every pending slice change and returns, per Service, its endpoints before and after. */
  checkoutChanges(): Map<string, EndpointsChange> {
    const changes = new Map<string, EndpointsChange>();
    for (const serviceKey of this.pendingServices) {
      const tracker = this.services.get(serviceKey);
      if (tracker === undefined) continue;
      const previous = tracker.appliedEndpoints;
      for (const [sliceName, state] of tracker.pending) {
        if (state.info === null) tracker.applied.delete(sliceName);
        else tracker.applied.set(sliceName, state.info);
      }
      tracker.pending.clear();
      const current = tracker.applied.size === 0 ? NO_SERVICE_ENDPOINTS : this.endpointsOf(tracker);
      tracker.appliedEndpoints = current;
      if (tracker.applied.size === 0) this.services.delete(serviceKey);
      changes.set(serviceKey, { previous, current });
    }
    this.pendingServices.clear();
    return changes;
  }

  /** Merges a Service's slices into per-port endpoint lists, de-duplicated by `ip:port`, sorted by it. */
  private endpointsOf(tracker: ServiceSlices): ServiceEndpoints {
    const byPort = new Map<string, { name: ServicePortName; byKey: Map<string, Endpoint> }>();
    // Sorted so that which duplicate wins does not depend on arrival order.
    const slices = [...tracker.applied].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [sliceName, info] of slices) {
      for (const port of info.ports) {
        const name = servicePortName(tracker.namespace, tracker.name, port.name, port.protocol);
        let entry = byPort.get(name.key);
        if (entry === undefined) {
          entry = { name, byKey: new Map() };
          byPort.set(name.key, entry);
        } else if (entry.name.protocol !== port.protocol) {
          // Only while slices disagree during a protocol change of the port: our maps are keyed by
          // port name alone (upstream adds the protocol), so the first slice in name order wins.
          this.options.logger.debug('EndpointSlices disagree on a port protocol, ignoring one', {
            servicePort: name.key,
            endpointSlice: sliceName,
            protocol: port.protocol,
            kept: entry.name.protocol,
          });
          continue;
        }
        for (const ep of info.endpoints) {
          const endpoint = this.makeEndpoint(ep, port.port);
          // The same ip:port may sit in two slices while an endpoint moves between them, or belong to
          // two pods when the pod network reuses a terminating pod's IP: prefer the non-terminating one.
          if (!entry.byKey.has(endpoint.key) || !endpoint.terminating) entry.byKey.set(endpoint.key, endpoint);
        }
      }
    }

    const result = new Map<string, PortEndpoints>();
    for (const [key, { name, byKey }] of byPort) {
      if (byKey.size === 0) continue;
      const endpoints = [...byKey.values()].sort(byEndpointKey);
      result.set(key, { name, endpoints });
    }
    return result;
  }

  private makeEndpoint(ep: SliceEndpoint, port: number): Endpoint {
    const nodeName = this.options.nodeName;
    return {
      ip: ep.ip,
      port,
      key: joinHostPort(ep.ip, port),
      ready: ep.ready,
      serving: ep.serving,
      terminating: ep.terminating,
      isLocal: nodeName !== '' && ep.nodeName === nodeName,
      nodeName: ep.nodeName,
      zone: ep.zone,
      zoneHints: ep.zoneHints,
      nodeHints: ep.nodeHints,
    };
  }
}

/** Whether `state` differs from the slice's pending version or, if none, from its applied version. */
function stateChanged(tracker: ServiceSlices | undefined, sliceName: string, state: SliceState): boolean {
  const pending = tracker?.pending.get(sliceName);
  if (pending !== undefined) return !sameState(pending, state);
  const applied = tracker?.applied.get(sliceName);
  if (applied !== undefined) return state.info === null || !sliceInfoEquals(applied, state.info);
  // Removing a slice we never saw changes nothing.
  return state.info !== null;
}

function sameState(a: SliceState, b: SliceState): boolean {
  if (a.info === null || b.info === null) return a.info === b.info;
  return sliceInfoEquals(a.info, b.info);
}

function byEndpointKey(a: Endpoint, b: Endpoint): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}
