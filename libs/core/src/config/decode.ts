import * as yaml from 'js-yaml';
import type { KubeProxyConfiguration } from './types.js';
import { API_VERSION, KIND, applyDefaults, type KubeProxyConfigurationInput } from './defaults.js';
import { DurationError, formatDurationNs, normalizeDuration } from './duration.js';
import { ConfigError } from './errors.js';
import { KUBE_PROXY_CONFIGURATION_SCHEMA, type FieldSchema } from './schema.js';

/**
 * Reads a KubeProxyConfiguration file (YAML or JSON) strictly, then applies upstream's defaults.
 * Strict means: the apiVersion/kind must be ours, every field must be one upstream defines (or our
 * backendPlugins extension), and every value must have the right type. The first problem is thrown
 * as a ConfigError naming the field path, so a typo never silently falls back to a default.
 */
export function decodeConfiguration(text: string, sourceName: string): KubeProxyConfiguration {
  const raw = parseDocument(text, sourceName);
  if (!isPlainObject(raw)) {
    throw new ConfigError('', `expected a ${KIND} object, got ${describe(raw)}`, sourceName);
  }
  checkTypeMeta(raw, sourceName);
  const typed = decodeField(KUBE_PROXY_CONFIGURATION_SCHEMA, raw, '', sourceName) as KubeProxyConfigurationInput;
  return applyDefaults(typed);
}

function parseDocument(text: string, sourceName: string): unknown {
  if (text.trim() === '') throw new ConfigError('', 'the configuration is empty', sourceName);
  try {
    // CORE_SCHEMA: plain YAML 1.2 scalars only (no timestamps/binary), so values keep JSON's types.
    return yaml.load(text, { schema: yaml.CORE_SCHEMA, filename: sourceName });
  } catch (yamlError) {
    const trimmed = text.trimStart();
    if (trimmed.startsWith('{')) {
      // JSON is YAML, except for some whitespace (tabs) js-yaml refuses in flow style.
      try {
        return JSON.parse(text) as unknown;
      } catch {
        // report the YAML error, which has a line number
      }
    }
    const reason = yamlError instanceof yaml.YAMLException ? yamlError.message : String(yamlError);
    throw new ConfigError('', `not valid YAML or JSON: ${reason}`, sourceName);
  }
}

function checkTypeMeta(raw: Record<string, unknown>, sourceName: string): void {
  const { apiVersion, kind } = raw;
  if (apiVersion === undefined || apiVersion === null || apiVersion === '') {
    throw new ConfigError('apiVersion', `is required and must be "${API_VERSION}"`, sourceName);
  }
  if (apiVersion !== API_VERSION) {
    throw new ConfigError('apiVersion', `must be "${API_VERSION}", got ${describe(apiVersion)}`, sourceName);
  }
  if (kind === undefined || kind === null || kind === '') {
    throw new ConfigError('kind', `is required and must be "${KIND}"`, sourceName);
  }
  if (kind !== KIND) {
    throw new ConfigError('kind', `must be "${KIND}", got ${describe(kind)}`, sourceName);
  }
}

/** Checks and converts one value against its schema; returns undefined for "absent". */
function decodeField(schema: FieldSchema, value: unknown, path: string, source: string): unknown {
  // A JSON null leaves a Go field at its zero value / nil pointer: the same as leaving it out. Lists keep
  // null, because upstream writes `nodePortAddresses: null` and distinguishes it from [].
  if (value === null || value === undefined) return undefined;
  const fail = (expected: string): never => {
    throw new ConfigError(path, `must be ${expected}, got ${describe(value)}`, source);
  };

  switch (schema.kind) {
    case 'string':
      return typeof value === 'string' ? value : fail('a string');
    case 'bool':
      return typeof value === 'boolean' ? value : fail('a boolean');
    case 'float':
      return typeof value === 'number' && Number.isFinite(value) ? value : fail('a number');
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value)) return fail('an integer');
      if (value < schema.min || value > schema.max) {
        throw new ConfigError(path, `must be an integer in [${schema.min}, ${schema.max}], got ${value}`, source);
      }
      return value;
    case 'duration':
      if (typeof value !== 'string') return fail('a duration string such as "30s" or "1h0m0s"');
      return canonicalDuration(value, path, source);
    case 'durationOrNanos':
      if (typeof value === 'number' && Number.isInteger(value)) return formatDurationNs(value);
      if (typeof value !== 'string') return fail('a duration string such as "5s", or nanoseconds');
      return canonicalDuration(value, path, source);
    case 'quantity':
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      if (typeof value === 'string' && QUANTITY.test(value)) return value;
      return fail('a quantity such as "0" or "64Ki"');
    case 'stringList':
    case 'list': {
      if (!Array.isArray(value)) return fail('a list');
      const item: FieldSchema = schema.kind === 'list' ? schema.item : { kind: 'string' };
      return value.map((v, index) => {
        const itemPath = `${path}[${index}]`;
        if (v === null || v === undefined) throw new ConfigError(itemPath, 'must not be null', source);
        return decodeField(item, v, itemPath, source);
      });
    }
    case 'mapStringBool': {
      if (!isPlainObject(value)) return fail('a map of names to booleans');
      const out: Record<string, boolean> = {};
      for (const [key, v] of Object.entries(value)) {
        if (typeof v !== 'boolean') {
          throw new ConfigError(`${path}.${key}`, `must be a boolean, got ${describe(v)}`, source);
        }
        out[key] = v;
      }
      return out;
    }
    case 'discarded':
      decodeField(schema.inner, value, path, source);
      return undefined;
    case 'object': {
      if (!isPlainObject(value)) return fail('an object');
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        const childPath = path ? `${path}.${key}` : key;
        const childSchema = schema.fields[key];
        if (!childSchema) throw new ConfigError(childPath, `unknown field "${childPath}"`, source);
        if (v === null && childSchema.kind === 'stringList') {
          out[key] = null;
          continue;
        }
        const decoded = decodeField(childSchema, v, childPath, source);
        if (decoded !== undefined) out[key] = decoded;
      }
      return out;
    }
  }
}

function canonicalDuration(text: string, path: string, source: string): string {
  try {
    return normalizeDuration(text);
  } catch (e) {
    const reason = e instanceof DurationError ? e.message : String(e);
    throw new ConfigError(path, `must be a duration such as "30s" or "1h0m0s" (${reason})`, source);
  }
}

/** resource.Quantity text: a signed decimal with an optional exponent or SI/binary suffix. */
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `string ${JSON.stringify(v)}`;
  return `${typeof v} ${String(v)}`;
}
