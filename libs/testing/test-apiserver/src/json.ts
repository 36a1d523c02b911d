/** JSON values as the patch implementations see them, and the error every patch kind throws. */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function isJsonObject(v: unknown): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Structural equality, key order ignored. */
export function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/** A patch that cannot be applied (the server answers 422, as the real one does for an unappliable patch). */
export class PatchError extends Error {
  override readonly name = 'PatchError';
}
