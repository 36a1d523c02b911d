import { parseCIDR, parseIP } from '../model/ip.js';
import type { FieldError, FieldPath } from './field-error.js';
import { isAbsent, isInt32, isRecord, jsonType, quote } from './json-shape.js';

/**
 * Field-level checks shared by the kinds' validators. Each pushes its errors onto `errs` and returns
 * the decoded value (or undefined when the field is absent or of the wrong JSON type), so a validator
 * can go on with cross-field rules on values it knows are well-formed.
 */

/** An optional string; absent (or null) decodes to "" as the API's zero value. Undefined on a wrong type. */
export function optionalString(value: unknown, path: FieldPath, errs: FieldError[]): string | undefined {
  if (isAbsent(value)) return '';
  if (typeof value === 'string') return value;
  errs.push(path.error(`must be a string, got ${jsonType(value)}`));
  return undefined;
}

/** An optional list; absent decodes to []. Undefined on a wrong type. */
export function optionalArray(value: unknown, path: FieldPath, errs: FieldError[]): unknown[] | undefined {
  if (isAbsent(value)) return [];
  if (Array.isArray(value)) return value;
  errs.push(path.error(`must be a list, got ${jsonType(value)}`));
  return undefined;
}

/** An optional object; absent decodes to undefined without an error. */
export function optionalRecord(value: unknown, path: FieldPath, errs: FieldError[]): Record<string, unknown> | undefined {
  if (isAbsent(value)) return undefined;
  if (isRecord(value)) return value;
  errs.push(path.error(`must be an object, got ${jsonType(value)}`));
  return undefined;
}

/** An optional boolean (conditions, allocateLoadBalancerNodePorts). */
export function optionalBoolean(value: unknown, path: FieldPath, errs: FieldError[]): boolean | undefined {
  if (isAbsent(value) || typeof value === 'boolean') return value ?? undefined;
  errs.push(path.error(`must be a boolean, got ${jsonType(value)}`));
  return undefined;
}

/** A list of strings; entries of another type are errors at their index and left out of the result. */
export function stringList(value: unknown, path: FieldPath, errs: FieldError[]): string[] | undefined {
  const list = optionalArray(value, path, errs);
  if (list === undefined) return undefined;
  const out: string[] = [];
  let ok = true;
  list.forEach((item, i) => {
    if (typeof item === 'string') out.push(item);
    else {
      ok = false;
      errs.push(path.index(i).error(`must be a string, got ${jsonType(item)}`));
    }
  });
  return ok ? out : undefined;
}

/** An enum value, as field.NotSupported words it. */
export function checkOneOf(value: string, allowed: readonly string[], path: FieldPath, errs: FieldError[]): boolean {
  if (allowed.includes(value)) return true;
  errs.push(path.error(`Unsupported value: ${quote(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`));
  return false;
}

/** An optional int32; absent decodes to 0. Undefined on a wrong type or a non-integer. */
export function optionalInt32(value: unknown, path: FieldPath, errs: FieldError[]): number | undefined {
  if (isAbsent(value)) return 0;
  if (isInt32(value)) return value;
  errs.push(path.error(typeof value === 'number' ? `Invalid value: ${quote(value)}: must be an integer` : `must be an integer, got ${jsonType(value)}`));
  return undefined;
}

/** validation.IsInRange; the 1..65535 case is IsValidPortNum. */
export function checkRange(value: number, min: number, max: number, path: FieldPath, errs: FieldError[]): boolean {
  if (value >= min && value <= max) return true;
  errs.push(path.error(`Invalid value: ${value}: must be between ${min} and ${max}, inclusive`));
  return false;
}

/**
 * An IP address as the API server reads legacy IP fields (netutils.ParseIPSloppy: IPv4 fields may have
 * leading zeros, no zones), which is what core's parseIP implements.
 */
export function checkIP(value: string, path: FieldPath, errs: FieldError[]): boolean {
  if (parseIP(value) !== undefined) return true;
  errs.push(path.error(`Invalid value: ${quote(value)}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`));
  return false;
}

/** A CIDR as the API server reads legacy CIDR fields (ParseCIDRSloppy). */
export function checkCIDR(value: string, path: FieldPath, errs: FieldError[]): boolean {
  if (parseCIDR(value) !== undefined) return true;
  errs.push(path.error(`Invalid value: ${quote(value)}: must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`));
  return false;
}

/** Runs a name rule on a string field, wording each problem as field.Invalid does. */
export function checkFormat(value: string, rule: (v: string) => string[], path: FieldPath, errs: FieldError[]): boolean {
  const msgs = rule(value);
  for (const msg of msgs) errs.push(path.error(`Invalid value: ${quote(value)}: ${msg}`));
  return msgs.length === 0;
}
