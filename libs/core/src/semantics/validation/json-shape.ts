/**
 * Type tests for decoded JSON/YAML. Objects reach the validators typed as client-node's classes, but a
 * manifest file can hold anything at those fields (a number for a name, a string for a list); the
 * API server's typed decoder would reject such an object before validation, so the validators report
 * a wrong JSON type as an error of that field instead of trusting the static type.
 */

/** A plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Absent in the API's sense: a missing field or an explicit null decode to the zero value. */
export function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** An integer that fits the API's int32 fields. */
export function isInt32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= -2147483648 && value <= 2147483647;
}

/** The JSON type name of a value, for "must be a string, got number" messages. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * A short, single-line, quoted rendering of a value for messages: the hostile values validation exists
 * for (newlines, NUL bytes, quotes, megabyte strings) must not reach a log line raw or whole.
 */
export function quote(value: unknown, max = 64): string {
  const text = typeof value === 'string' ? value : String(value);
  const clipped = text.length > max ? `${text.slice(0, max)}…(${text.length - max} more)` : text;
  return JSON.stringify(clipped);
}

/** Length in bytes as Go's len() counts it (UTF-8), for the API's maximum lengths. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
