import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '@kube-proxy/core';
import type { InformerEvents } from './resource-informer.js';

/** Upstream's handler contract for one resource, independent of the resource's method names. */
export interface ObjectHandler<T> {
  add(obj: T): void;
  update(previous: T, current: T): void;
  delete(obj: T): void;
  synced(): void;
}

/** The informer cache key: namespace/name, as client-go's MetaNamespaceKeyFunc. */
export function objectKey(obj: KubernetesObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

/**
 * Turns informer callbacks into upstream handler semantics:
 * - update(previous, current): client-node hands over only the new object, so the adapter keeps the
 *   last delivered object per key; an "add" for a key it already knows is an update (a relist
 *   after a restart re-adds everything);
 * - deletes, including objects that vanished while the watch was down: after every relist, what
 *   the adapter delivered but the list no longer has is deleted (with its last known state);
 * - synced() exactly once, after the initial list has been delivered;
 * - resync(): update(obj, obj) for every object, as a shared informer's periodic resync.
 * The handler may be attached after the informer started (the Node informer runs before the proxier
 * exists): it then receives the current objects as adds, and synced() if the list is already in.
 * A throwing handler is logged and contained; it must not stop the informer.
 */
export class HandlerAdapter<T extends KubernetesObject> implements InformerEvents<T> {
  private readonly known = new Map<string, T>();
  private handler: ObjectHandler<T> | undefined;
  private listedOnce = false;
  private syncedDelivered = false;

  constructor(
    private readonly kind: string,
    private readonly logger: Logger,
  ) {}

  attach(handler: ObjectHandler<T>): void {
    if (this.handler) throw new Error(`${this.kind} handler already attached`);
    this.handler = handler;
    for (const obj of this.known.values()) this.call('add', obj, () => handler.add(obj));
    this.deliverSynced();
  }

  /** Objects delivered (or, before attach, to be delivered), by key. */
  get(key: string): T | undefined {
    return this.known.get(key);
  }

  values(): T[] {
    return [...this.known.values()];
  }

  get size(): number {
    return this.known.size;
  }

  add(obj: T): void {
    this.upsert(obj);
  }

  update(obj: T): void {
    this.upsert(obj);
  }

  delete(obj: T): void {
    const key = objectKey(obj);
    if (!this.known.delete(key)) return;
    const h = this.handler;
    if (h) this.call('delete', obj, () => h.delete(obj));
  }

  listed(objects: readonly T[]): void {
    const present = new Set<string>();
    for (const obj of objects) {
      const key = objectKey(obj);
      present.add(key);
      // ListWatch has already reported changed objects; this only catches what it could not know.
      if (this.known.get(key) !== obj) this.upsert(obj);
    }
    for (const [key, prev] of [...this.known]) {
      if (present.has(key)) continue;
      this.known.delete(key);
      const h = this.handler;
      if (h) this.call('delete', prev, () => h.delete(prev));
    }
    this.listedOnce = true;
    this.deliverSynced();
  }

  /** Re-delivers every object as an unchanged update (configSyncPeriod). */
  resync(): void {
    const h = this.handler;
    if (!h || !this.syncedDelivered) return;
    for (const obj of this.known.values()) this.call('update', obj, () => h.update(obj, obj));
  }

  private upsert(obj: T): void {
    const key = objectKey(obj);
    const prev = this.known.get(key);
    this.known.set(key, obj);
    const h = this.handler;
    if (!h) return;
    if (prev) this.call('update', obj, () => h.update(prev, obj));
    else this.call('add', obj, () => h.add(obj));
  }

  private deliverSynced(): void {
    const h = this.handler;
    if (!h || !this.listedOnce || this.syncedDelivered) return;
    this.syncedDelivered = true;
    try {
      h.synced();
    } catch (err) {
      this.logger.error('Handler failed', { kind: this.kind, op: 'synced', err: (err as Error).message });
    }
  }

  private call(op: string, obj: T, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error('Handler failed', { kind: this.kind, op, object: objectKey(obj), err: (err as Error).message });
    }
  }
}
