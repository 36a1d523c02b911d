import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { IPFamily } from '../model/protocol.js';
import { ANNOTATION_LAST_CHANGE_TRIGGER_TIME } from '../model/well-known.js';
import type { Logger } from '../../host/logger.js';
import { EndpointSliceCache } from './endpoint-slice-cache.js';
import type { EndpointsChange } from './endpoints-change.js';
import { parseRFC3339 } from './trigger-time.js';

export interface EndpointsChangeTrackerOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  readonly logger: Logger;
  /** Trigger times at or before this instant (ms since epoch) are ignored; defaults to construction time. */
  readonly startTime?: number;
}

/**
 * Accumulates EndpointSlice changes between syncs (upstream's EndpointsChangeTracker). A proxier of
 * one family only consumes slices of the matching addressType; FQDN slices and the other family are
 * ignored. Also collects the last-change-trigger-time of each change for the
 * network-programming-latency metric.
 */
export class EndpointsChangeTracker {
  private readonly cache: EndpointSliceCache;
  private readonly startTime: number;
  private triggerTimes = new Map<string, number[]>();

  constructor(private readonly options: EndpointsChangeTrackerOptions) {
    this.cache = new EndpointSliceCache(options);
    this.startTime = options.startTime ?? Date.now();
  }

  /**
   * Records an added/updated slice, or its removal. Returns true if this update changed what the next
   * sync must apply (unlike ServiceChangeTracker.update, which reports whether anything is pending).
   */
  endpointSliceUpdate(slice: V1EndpointSlice, removeSlice: boolean): boolean {
    const keys = this.cache.updatePending(slice, removeSlice);
    if (keys === undefined) return false;

    // A deleted slice's annotation dates from its last update, not from the deletion: measuring it would
    // report a latency that never happened, so the Service's pending trigger times are dropped instead.
    if (removeSlice) {
      this.triggerTimes.delete(keys.service);
    } else {
      const t = this.triggerTime(slice, keys.service);
      if (t !== undefined && t > this.startTime) {
        const times = this.triggerTimes.get(keys.service);
        if (times === undefined) this.triggerTimes.set(keys.service, [t]);
        else times.push(t);
      }
    }
    return true;
  }

  /** Number of Services with slice changes not yet applied. */
  pendingCount(): number {
    return this.cache.pendingCount();
  }

  /** Namespaced names of the Services with slice changes not yet applied. */
  pendingNames(): string[] {
    return this.cache.pendingNames();
  }

  /** Hands over every pending change (used by MutableEndpointsMap.update). */
  checkoutChanges(): Map<string, EndpointsChange> {
    return this.cache.checkoutChanges();
  }

  /** Hands over the trigger times collected since the last checkout. */
  checkoutTriggerTimes(): Map<string, number[]> {
    const times = this.triggerTimes;
    this.triggerTimes = new Map();
    return times;
  }

  private triggerTime(slice: V1EndpointSlice, service: string): number | undefined {
    const text = slice.metadata?.annotations?.[ANNOTATION_LAST_CHANGE_TRIGGER_TIME];
    if (text === undefined || text === null) return undefined;
    const t = typeof text === 'string' ? parseRFC3339(text) : undefined;
    if (t === undefined) {
      this.options.logger.warn('Ignoring unparseable last-change-trigger-time', {
        service,
        field: `metadata.annotations[${ANNOTATION_LAST_CHANGE_TRIGGER_TIME}]`,
        value: text,
      });
    }
    return t;
  }
}
