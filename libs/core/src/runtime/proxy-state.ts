import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { EndpointSliceHandler, NodeHandler, ServiceHandler } from '../contracts/handlers.js';
import type { IPFamily } from '../semantics/model/protocol.js';
import type { Logger } from '../host/logger.js';
import { EndpointsChangeTracker } from '../semantics/tracking/endpoints-change-tracker.js';
import { MutableEndpointsMap } from '../semantics/tracking/endpoints-map.js';
import { ServiceChangeTracker } from '../semantics/tracking/service-change-tracker.js';
import { MutableServicePortMap } from '../semantics/tracking/service-port-map.js';
import type { AppliedChanges, EndpointsMap, ServicePortMap } from '../semantics/tracking/types.js';
import { topologyLabelsDiffer } from './topology-labels.js';

export interface ProxyStateOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  readonly logger: Logger;
  /** Called whenever a sync is wanted; the proxier rate-limits and checks isInitialized() itself. */
  readonly onChange: () => void;
}

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The part of a proxier that is the same for every backend: it receives Service, EndpointSlice and
 * Node events, accumulates them, and on request applies them to the service and endpoints maps the
 * backend programs from. Handlers never throw: a malformed object is logged and skipped, so one bad
 * object cannot stall the informers feeding every other change.
 */
export class ProxyState implements ServiceHandler, EndpointSliceHandler, NodeHandler {
  private readonly serviceChanges: ServiceChangeTracker;
  private readonly endpointChanges: EndpointsChangeTracker;
  private readonly services: MutableServicePortMap;
  private readonly endpoints = new MutableEndpointsMap();
  private servicesSynced = false;
  private endpointSlicesSynced = false;
  private labels: Readonly<Record<string, string>> = NO_LABELS;
  private topologyChanged = false;

  constructor(private readonly options: ProxyStateOptions) {
    const { family, nodeName, logger } = options;
    this.serviceChanges = new ServiceChangeTracker({ family, nodeName, logger });
    this.endpointChanges = new EndpointsChangeTracker({ family, nodeName, logger });
    this.services = new MutableServicePortMap(logger);
  }

  get serviceMap(): ServicePortMap {
    return this.services;
  }

  get endpointsMap(): EndpointsMap {
    return this.endpoints;
  }

  /** Service ports with health-check node ports, by namespaced name (as of the last apply). */
  healthCheckNodePorts(): Map<string, number> {
    return this.services.healthCheckNodePorts();
  }

  /** Local ready endpoint counts, by namespaced name (as of the last apply). */
  localReadyEndpoints(): Map<string, number> {
    return this.endpoints.localReadyEndpoints();
  }

  /** The labels of this proxier's Node, as last received. */
  get nodeLabels(): Readonly<Record<string, string>> {
    return this.labels;
  }

  /** True once both the initial Service and EndpointSlice lists have been delivered. */
  isInitialized(): boolean {
    return this.servicesSynced && this.endpointSlicesSynced;
  }

  /** Drains every pending change into the maps and reports what changed. */
  applyPendingChanges(): AppliedChanges {
    return {
      services: this.services.update(this.serviceChanges),
      endpoints: this.endpoints.update(this.endpointChanges),
    };
  }

  pendingServiceChanges(): number {
    return this.serviceChanges.pendingCount();
  }

  pendingEndpointChanges(): number {
    return this.endpointChanges.pendingCount();
  }

  /** Whether the node's topology labels changed since the last call; resets the flag. */
  takeTopologyChanged(): boolean {
    const changed = this.topologyChanged;
    this.topologyChanged = false;
    return changed;
  }

  onServiceAdd(service: V1Service): void {
    this.serviceEvent('add', null, service);
  }

  onServiceUpdate(previous: V1Service, current: V1Service): void {
    this.serviceEvent('update', previous, current);
  }

  onServiceDelete(service: V1Service): void {
    this.serviceEvent('delete', service, null);
  }

  onServicesSynced(): void {
    this.servicesSynced = true;
    this.notify();
  }

  onEndpointSliceAdd(slice: V1EndpointSlice): void {
    this.sliceEvent('add', slice, false);
  }

  onEndpointSliceUpdate(_previous: V1EndpointSlice, current: V1EndpointSlice): void {
    this.sliceEvent('update', current, false);
  }

  onEndpointSliceDelete(slice: V1EndpointSlice): void {
    this.sliceEvent('delete', slice, true);
  }

  onEndpointSlicesSynced(): void {
    this.endpointSlicesSynced = true;
    this.notify();
  }

  onNodeAdd(node: V1Node): void {
    this.nodeEvent('add', node, false);
  }

  onNodeUpdate(_previous: V1Node, current: V1Node): void {
    this.nodeEvent('update', current, false);
  }

  onNodeDelete(node: V1Node): void {
    this.nodeEvent('delete', node, true);
  }

  onNodeSynced(): void {
    // Nothing waits on the Node: a node without labels simply gets no topology-aware routing.
  }

  private serviceEvent(event: string, previous: V1Service | null, current: V1Service | null): void {
    try {
      if (this.serviceChanges.update(previous, current)) this.notify();
    } catch (err) {
      this.options.logger.error('Failed to process Service event', { event, service: refOf(current ?? previous), err });
    }
  }

  private sliceEvent(event: string, slice: V1EndpointSlice, remove: boolean): void {
    try {
      if (this.endpointChanges.endpointSliceUpdate(slice, remove)) this.notify();
    } catch (err) {
      this.options.logger.error('Failed to process EndpointSlice event', { event, endpointSlice: refOf(slice), err });
    }
  }

  private nodeEvent(event: string, node: V1Node, deleted: boolean): void {
    try {
      const name = node?.metadata?.name;
      if (name !== this.options.nodeName) {
        this.options.logger.warn('Ignoring event for a node other than this one', {
          event,
          node: name,
          expected: this.options.nodeName,
        });
        return;
      }
      const next = deleted ? NO_LABELS : stringLabels(node.metadata?.labels);
      const changed = topologyLabelsDiffer(this.labels, next);
      this.labels = next;
      if (changed) {
        this.options.logger.verbose('Node topology labels changed', { node: name, labels: next });
        this.topologyChanged = true;
        this.notify();
      }
    } catch (err) {
      this.options.logger.error('Failed to process Node event', { event, err });
    }
  }

  /** The proxier's callback must not break event delivery either. */
  private notify(): void {
    try {
      this.options.onChange();
    } catch (err) {
      this.options.logger.error('Sync request callback failed', { err });
    }
  }
}

function stringLabels(labels: unknown): Readonly<Record<string, string>> {
  if (labels === null || typeof labels !== 'object') return NO_LABELS;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels)) if (typeof value === 'string') out[key] = value;
  return Object.freeze(out);
}

function refOf(obj: { metadata?: { namespace?: string; name?: string } } | null | undefined): string {
  return `${obj?.metadata?.namespace ?? ''}/${obj?.metadata?.name ?? ''}`;
}
