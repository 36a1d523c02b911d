/*
 * Histogram bucket helpers with client_golang's arithmetic (repeated multiply / add), so the
 * boundaries print exactly as upstream's do.
 */

export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}

export function linearBuckets(start: number, width: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v += width) out.push(v);
  return out;
}

/**
 * component-base's MergeBuckets: the lists concatenated after a leading 0 bucket (upstream starts
 * from a one-element zero slice, so every merged histogram has an `le="0"` bucket).
 */
export function mergeBuckets(...lists: number[][]): number[] {
  return [0, ...lists.flat()];
}
