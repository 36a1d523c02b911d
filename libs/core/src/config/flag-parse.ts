import { DurationError, normalizeDuration } from './duration.js';
import { findFlag, findShorthand, type FlagSpec, type FlagValue } from './flag-table.js';
import { isValidIP } from '../semantics/model/ip.js';
import { splitHostPort } from './net-text.js';

/** A command line that cannot be used. `flag` names the offending flag (with dashes) when there is one. */
export class FlagError extends Error {
  override readonly name = 'FlagError';
  constructor(
    message: string,
    readonly flag?: string,
  ) {
    super(message);
  }
}

/** What the command line asked for that is not configuration. */
export interface CliOptions {
  readonly help: boolean;
  readonly version: boolean;
  readonly configFile?: string;
  readonly writeConfigTo?: string;
  readonly cleanup: boolean;
  readonly initOnly: boolean;
  readonly master?: string;
  readonly manifests?: string;
  readonly dryRun: boolean;
  readonly once: boolean;
  readonly serviceProxyName?: string;
}

export interface ParsedFlags {
  /** The flags given, by long name, parsed and merged (lists/maps accumulate, others: last wins). */
  readonly values: ReadonlyMap<string, FlagValue>;
  readonly options: CliOptions;
  /** Notices for flags that are deprecated or have no effect, to log at startup. */
  readonly warnings: readonly string[];
}

/**
 * Parses argv (without node and script) the way pflag does for kube-proxy: `--flag=value`,
 * `--flag value`, bool `--flag` / `--flag=false`, shorthands `-v 4` / `-v=4` / `-v4` / `-h`, and
 * `_` read as `-` in names. Unknown flags, bad values and positional arguments are errors.
 */
export function parseFlags(argv: readonly string[]): ParsedFlags {
  const values = new Map<string, FlagValue>();
  const warnings: string[] = [];
  let help = false;

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      if (i + 1 < argv.length) throw positional(argv[i + 1]);
      break;
    }
    if (!arg.startsWith('-') || arg === '-') throw positional(arg);

    let spec: FlagSpec | undefined;
    let shown: string;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const body = arg.slice(2);
      const eq = body.indexOf('=');
      const rawName = eq < 0 ? body : body.slice(0, eq);
      inline = eq < 0 ? undefined : body.slice(eq + 1);
      const name = rawName.replaceAll('_', '-');
      shown = `--${name}`;
      spec = findFlag(name);
      if (!spec) throw new FlagError(`unknown flag: --${rawName}`, `--${rawName}`);
    } else {
      const letter = arg[1];
      shown = `-${letter}`;
      spec = findShorthand(letter);
      if (!spec) throw new FlagError(`unknown shorthand flag: '${letter}' in ${arg}`, arg);
      const rest = arg.slice(2);
      if (rest !== '') inline = rest.startsWith('=') ? rest.slice(1) : rest;
    }

    if (spec.name === 'help') {
      // pflag stops at -h/--help: whatever follows is not looked at.
      help = true;
      break;
    }

    let text: string;
    if (spec.type === 'bool') {
      text = inline ?? 'true';
    } else if (inline !== undefined) {
      text = inline;
    } else {
      if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: ${shown}`, shown);
      text = argv[++i];
    }

    values.set(spec.name, parseValue(spec, text, values.get(spec.name)));
    if (spec.deprecated) warnings.push(`Flag --${spec.name} has been deprecated, ${spec.deprecated}`);
    else if (spec.noEffect) warnings.push(`Flag --${spec.name} has no effect in kube-proxy-ts`);
  }

  const str = (name: string): string | undefined => {
    const v = values.get(name);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const bool = (name: string): boolean => values.get(name) === true;
  const options: CliOptions = {
    help,
    version: bool('version'),
    cleanup: bool('cleanup'),
    initOnly: bool('init-only'),
    dryRun: bool('dry-run'),
    once: bool('once'),
    ...optional('configFile', str('config')),
    ...optional('writeConfigTo', str('write-config-to')),
    ...optional('master', str('master')),
    ...optional('manifests', str('manifests')),
    ...optional('serviceProxyName', str('service-proxy-name')),
  };
  return { values, options, warnings: [...new Set(warnings)] };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

function positional(arg: string): FlagError {
  return new FlagError(`kube-proxy does not take any arguments, got ${JSON.stringify(arg)}`);
}

function invalid(spec: FlagSpec, text: string, reason: string): FlagError {
  return new FlagError(`invalid argument ${JSON.stringify(text)} for "--${spec.name}" flag: ${reason}`, `--${spec.name}`);
}

/** Go's strconv.ParseBool. */
function parseBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

function parseValue(spec: FlagSpec, text: string, previous: FlagValue | undefined): FlagValue {
  switch (spec.type) {
    case 'bool': {
      const b = parseBool(text);
      if (b === undefined) throw invalid(spec, text, 'must be true or false');
      return b;
    }
    case 'int': {
      if (!/^[+-]?\d+$/.test(text)) throw invalid(spec, text, 'must be an integer');
      const n = Number(text);
      if (n < -2147483648 || n > 2147483647) throw invalid(spec, text, 'out of range for a 32-bit integer');
      if (spec.name === 'v' && n < 0) throw invalid(spec, text, 'must not be negative');
      return n;
    }
    case 'float': {
      const n = text.trim() === '' ? NaN : Number(text);
      if (!Number.isFinite(n)) throw invalid(spec, text, 'must be a number');
      return n;
    }
    case 'duration':
      try {
        return normalizeDuration(text);
      } catch (e) {
        throw invalid(spec, text, e instanceof DurationError ? e.message : String(e));
      }
    case 'string':
      checkFormat(spec, text);
      return text;
    case 'stringList': {
      // pflag's StringSlice: comma-separated; each occurrence appends.
      const items = text === '' ? [] : text.split(',').map((s) => s.trim());
      const before = Array.isArray(previous) ? (previous as readonly string[]) : [];
      return [...before, ...items];
    }
    case 'mapStringBool': {
      const out: Record<string, boolean> = { ...((previous ?? {}) as Record<string, boolean>) };
      for (const pair of text.split(',')) {
        const item = pair.trim();
        if (item === '') continue;
        const eq = item.indexOf('=');
        if (eq < 0) throw invalid(spec, text, `missing bool value for ${item}`);
        const key = item.slice(0, eq).trim();
        const b = parseBool(item.slice(eq + 1).trim());
        if (b === undefined) throw invalid(spec, text, `invalid value of ${key}=${item.slice(eq + 1)}, must be true or false`);
        out[key] = b;
      }
      return out;
    }
  }
}

/** The checks upstream's IPVar / IPPortVar flag types make while parsing. */
function checkFormat(spec: FlagSpec, text: string): void {
  if (!spec.format || text.trim() === '') return;
  if (isValidIP(text)) return;
  if (spec.format === 'ip') throw invalid(spec, text, `${JSON.stringify(text)} is not a valid IP address`);
  let host: string;
  let port: string;
  try {
    ({ host, port } = splitHostPort(text));
  } catch (e) {
    throw invalid(spec, text, `${JSON.stringify(text)} is not in a valid format (ip or ip:port): ${(e as Error).message}`);
  }
  if (!isValidIP(host)) throw invalid(spec, text, `${JSON.stringify(host)} is not a valid IP address`);
  if (!/^\d+$/.test(port) || Number(port) > 65535) throw invalid(spec, text, `${JSON.stringify(port)} is not a valid number`);
}

