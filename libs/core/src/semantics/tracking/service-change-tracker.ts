import type { V1Service } from '@kubernetes/client-node';
import type { IPFamily } from '../model/protocol.js';
import { servicePortsFromService } from '../model/service-port-from-service.js';
import { servicePortEquals } from '../model/service-port-equals.js';
import { namespacedName } from '../model/service-port-name.js';
import type { ServicePort } from '../model/service-port.js';
import { nullLogger, type Logger } from '../../host/logger.js';

export interface ServiceChangeTrackerOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  readonly logger: Logger;
}

/** A Service's ports keyed by ServicePortName.key; null when the Service is absent or not proxied. */
export type ServicePortsByName = ReadonlyMap<string, ServicePort> | null;

/** One Service's ports before the first and after the last change since the previous sync. */
export interface ServiceChange {
  readonly previous: ServicePortsByName;
  readonly current: ServicePortsByName;
}

type PendingChange = { -readonly [K in keyof ServiceChange]: ServiceChange[K] };

/**
 * Accumulates Service changes between syncs (upstream's ServiceChangeTracker). Changes to one Service
 * coalesce: only the state at the last sync and the latest state are kept, and when those are equal
 * (an add followed by a delete, or an update that touched nothing kube-proxy uses) nothing is pending.
 */
export class ServiceChangeTracker {
  private items = new Map<string, PendingChange>();

  constructor(private readonly options: ServiceChangeTrackerOptions) {}

  /**
   * Records an add (`null`, svc), update (old, new) or delete (svc, `null`). Returns true when any
   * change is pending afterwards, whether or not this call caused it.
   */
  update(previous: V1Service | null, current: V1Service | null): boolean {
    const svc = current ?? previous;
    if (svc === null || svc === undefined) return false;
    const name = svc.metadata?.name;
    if (typeof name !== 'string' || name === '') {
      this.options.logger.warn('Ignoring Service without a name', { field: 'metadata.name' });
      return this.items.size > 0;
    }
    const key = namespacedName(svc.metadata?.namespace ?? '', name);

    let change = this.items.get(key);
    if (change === undefined) {
      // The previous object was parsed, and its problems reported, when it was the current one.
      change = { previous: this.portsOf(previous, nullLogger), current: null };
      this.items.set(key, change);
    }
    change.current = this.portsOf(current, this.options.logger);
    if (portMapsEqual(change.previous, change.current)) {
      this.items.delete(key);
    } else {
      this.options.logger.debug('Service ports changed', { service: key, ports: change.current?.size ?? 0 });
    }
    return this.items.size > 0;
  }

  /** Number of Services with changes not yet applied. */
  pendingCount(): number {
    return this.items.size;
  }

  /** Namespaced names of the Services with changes not yet applied. */
  pendingNames(): string[] {
    return [...this.items.keys()];
  }

  /** Hands over every pending change (used by MutableServicePortMap.update). */
  checkoutChanges(): Map<string, ServiceChange> {
    const items = this.items;
    this.items = new Map();
    return items;
  }

  private portsOf(svc: V1Service | null, logger: Logger): ServicePortsByName {
    if (svc === null || svc === undefined) return null;
    const ports = servicePortsFromService(svc, this.options.family, logger);
    // A Service with no proxied ports and an absent Service are the same to a proxier.
    if (ports.length === 0) return null;
    const byName = new Map<string, ServicePort>();
    for (const port of ports) byName.set(port.name.key, port);
    return byName;
  }
}

function portMapsEqual(a: ServicePortsByName, b: ServicePortsByName): boolean {
  if (a === null || b === null) return a === b;
  if (a.size !== b.size) return false;
  for (const [key, port] of a) {
    const other = b.get(key);
    if (other === undefined || !servicePortEquals(port, other)) return false;
  }
  return true;
}
