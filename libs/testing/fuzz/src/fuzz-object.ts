/**
 * What every fuzz generator yields: the object (possibly not even an object) plus what the generator
 * knows about it: whether the API server would accept it, and if not, which mutation broke it and
 * the field paths a validator may blame for it. Properties check validation against this knowledge.
 */
import type { Arbitrary } from 'fast-check';

export interface FuzzObject<T> {
  readonly object: T;
  /** True when the API server would accept the object as is. */
  readonly valid: boolean;
  /** For invalid objects: the mutation applied to a valid object (or `garbage`). */
  readonly mutation?: string;
  /** For invalid objects: field-path prefixes of which at least one error must start with one. */
  readonly fields?: readonly string[];
}

/** A breaking change to a valid object: mutates `obj` (a deep copy) in place, or returns a replacement. */
export interface Mutation<T> {
  readonly name: string;
  /** Field-path prefixes a validator may report for this mutation ('' = the object as a whole). */
  readonly fields: readonly string[];
  /** Whether the mutation applies to `obj` (e.g. needs a port, an endpoint, a given type). */
  readonly applies?: (obj: T) => boolean;
  readonly apply: (obj: T, value: unknown) => T | void;
  /** Generator of the value handed to `apply`. */
  readonly value: Arbitrary<unknown>;
}

/** structuredClone, but total: objects from the generators are plain JSON values. */
export function cloneObject<T>(obj: T): T {
  return structuredClone(obj);
}
