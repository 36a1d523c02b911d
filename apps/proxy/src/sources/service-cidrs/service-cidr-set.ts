import type { Logger, ServiceCIDRHandler } from '@kube-proxy/core';
import { readServiceCIDR } from './read-service-cidr.js';

/** Object names in log lines are clipped to this many characters (a name can be megabytes of garbage). */
const MAX_LOGGED_NAME = 300;

function nameOf(obj: unknown): string {
  const name = (obj as { metadata?: { name?: unknown } } | null | undefined)?.metadata?.name;
  return typeof name === 'string' ? name : '';
}

/**
 * The cluster's ServiceCIDR objects folded into the one thing the Provider consumes: the complete,
 * de-duplicated, sorted list of their CIDRs (upstream's ServiceCIDRConfig hands over the whole set on
 * every event). Sources feed it object changes and call flush() after a batch, so a file reload or
 * a relist produces one call, and only when the list changed; nothing is delivered before synced().
 * A malformed object is skipped with one warning per version; an object that turns malformed keeps
 * its last valid CIDRs, as ValidatedStream does for the other kinds.
 */
export class ServiceCIDRSet {
  private readonly valid = new Map<string, readonly string[]>();
  private readonly refused = new Map<string, unknown>();
  private delivered: readonly string[] = [];
  private isSynced = false;

  constructor(
    private readonly handler: ServiceCIDRHandler,
    private readonly logger: Logger,
  ) {}

  set(obj: unknown): void {
    const reading = readServiceCIDR(obj);
    const name = nameOf(obj);
    if (reading.ok) {
      this.refused.delete(name);
      this.valid.set(name, reading.cidrs);
      return;
    }
    if (this.refused.get(name) === obj) return;
    this.refused.set(name, obj);
    const kept = this.valid.has(name);
    this.logger.warn(kept ? 'Skipping invalid ServiceCIDR; keeping its last valid version' : 'Skipping invalid ServiceCIDR', {
      kind: 'ServiceCIDR',
      object: name.length > MAX_LOGGED_NAME ? `${name.slice(0, MAX_LOGGED_NAME)}…(${name.length - MAX_LOGGED_NAME} more characters)` : name,
      error: reading.error,
    });
  }

  remove(obj: unknown): void {
    const name = nameOf(obj);
    this.refused.delete(name);
    this.valid.delete(name);
  }

  /** The initial objects are in: delivers the list if it is non-empty, and every change from now on. */
  synced(): void {
    this.isSynced = true;
    this.flush();
  }

  /** Delivers the list if it differs from the one delivered last (and the initial objects are in). */
  flush(): void {
    if (!this.isSynced) return;
    const next = this.list();
    if (next.length === this.delivered.length && next.every((c, i) => c === this.delivered[i])) return;
    this.delivered = next;
    try {
      this.handler.onServiceCIDRsChanged(next);
    } catch (err) {
      // A throwing handler is a bug there; the source must keep running.
      this.logger.error('Handler failed', { kind: 'ServiceCIDR', op: 'changed', err: (err as Error).message });
    }
  }

  /** Every CIDR of every valid object, once, sorted so the output does not depend on event order. */
  list(): readonly string[] {
    const all = new Set<string>();
    for (const cidrs of this.valid.values()) for (const c of cidrs) all.add(c);
    return [...all].sort();
  }

  get size(): number {
    return this.valid.size;
  }
}
