/**
 * A read-only face over a Map owned by a subclass. The maps handed to backends implement ReadonlyMap
 * through this, so callers can read them like any Map but cannot bypass the update() that keeps the
 * subclass's derived indexes (health-check ports, local endpoint counts) in step.
 */
export abstract class ReadonlyMapView<K, V> implements ReadonlyMap<K, V> {
  protected readonly entriesByKey = new Map<K, V>();

  get size(): number {
    return this.entriesByKey.size;
  }

  get(key: K): V | undefined {
    return this.entriesByKey.get(key);
  }

  has(key: K): boolean {
    return this.entriesByKey.has(key);
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entriesByKey) callback.call(thisArg, value, key, this);
  }

  entries(): MapIterator<[K, V]> {
    return this.entriesByKey.entries();
  }

  keys(): MapIterator<K> {
    return this.entriesByKey.keys();
  }

  values(): MapIterator<V> {
    return this.entriesByKey.values();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entriesByKey[Symbol.iterator]();
  }
}
