import type { ProxyCounters } from '@kube-proxy/userspace-proxy';

const FIELDS = [
  'tcpAccepted',
  'tcpActive',
  'endpointDialFailures',
  'tcpRejected',
  'udpAssociationsOpened',
  'udpAssociationsActive',
  'udpDropped',
] as const satisfies readonly (keyof ProxyCounters)[];

/** A block of shared memory for one family's counters. */
export function allocateCounters(): SharedArrayBuffer {
  return new SharedArrayBuffer(FIELDS.length * Float64Array.BYTES_PER_ELEMENT);
}

/**
 * ProxyCounters over shared memory: the data-plane worker increments them on its thread, the
 * metrics read them on the main thread at scrape time. Only the worker writes, so plain reads and
 * writes are enough (a scrape may see a value one event old).
 */
export function sharedCounters(buffer: SharedArrayBuffer): ProxyCounters {
  const values = new Float64Array(buffer);
  const counters = {} as ProxyCounters;
  FIELDS.forEach((field, i) => {
    Object.defineProperty(counters, field, {
      enumerable: true,
      get: () => values[i] as number,
      set: (v: number) => {
        values[i] = v;
      },
    });
  });
  return counters;
}
