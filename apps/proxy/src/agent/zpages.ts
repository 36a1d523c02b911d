import { KUBE_PROXY_FLAGS, normalizeDuration, type FlagSpec, type FlagValue } from '@kube-proxy/core';

/**
 * component-base's z-pages as kube-proxy serves them on its metrics address (KEP-4827 /statusz, PR
 * #128989; KEP-4828 /flagz, PR #128985): plain text for people, a two-line header naming the
 * component and warning that the format is not stable, then `key: value` lines (statusz) or
 * `flag=value` lines, sorted (flagz). Gated by ComponentStatusz / ComponentFlagz, as upstream.
 */

const WARNING =
  'Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.';

function header(title: string): string {
  return `\nkube-proxy ${title}\n${WARNING}\n\n`;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number): string => String(n).padStart(2, '0');

/** Go's time.UnixDate layout in UTC ("Mon Jan _2 15:04:05 UTC 2006"), as upstream prints Started. */
export function goUnixDateUTC(ms: number): string {
  const d = new Date(ms);
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${time} UTC ${d.getUTCFullYear()}`;
}

/** Upstream's uptime format: "%d hr %02d min %02d sec". */
export function uptimeText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 3600)} hr ${two(Math.floor(s / 60) % 60)} min ${two(s % 60)} sec`;
}

export interface StatuszFacts {
  /** When the process started (epoch ms). */
  readonly startedMs: number;
  readonly nowMs: number;
  /** kube-proxy-ts's own version (upstream: the binary's Kubernetes version). */
  readonly binaryVersion: string;
  /** The Kubernetes minor whose behaviour is emulated ("1.37"). */
  readonly emulationVersion: string;
  /** The runtime (upstream prints "Go version"; we run on Node.js). */
  readonly runtimeVersion: string;
  /** The paths the metrics server answers. */
  readonly paths: readonly string[];
}

/** The /statusz body. */
export function statuszText(f: StatuszFacts): string {
  return (
    header('statusz') +
    `Started: ${goUnixDateUTC(f.startedMs)}\n` +
    `Up: ${uptimeText(f.nowMs - f.startedMs)}\n` +
    `Node.js version: ${f.runtimeVersion}\n` +
    `Binary version: ${f.binaryVersion}\n` +
    `Emulation version: ${f.emulationVersion}\n` +
    `Paths: ${[...f.paths].sort().join(' ')}\n`
  );
}

/** A flag's value as pflag prints it (Value.String()): the given value, else the default. */
export function flagValueText(spec: FlagSpec, given: FlagValue | undefined): string {
  const value = given ?? spec.default;
  switch (spec.type) {
    case 'stringList':
      return `[${Array.isArray(value) ? (value as readonly string[]).join(',') : ''}]`;
    case 'mapStringBool': {
      const map = (value ?? {}) as Readonly<Record<string, boolean>>;
      return Object.keys(map)
        .sort()
        .map((k) => `${k}=${map[k]}`)
        .join(',');
    }
    case 'duration':
      return typeof value === 'string' ? normalizeDuration(value) : '';
    default:
      return value === undefined ? '' : String(value);
  }
}

/** The /flagz body: every flag kube-proxy-ts accepts with the value this process runs with, by name. */
export function flagzText(given: ReadonlyMap<string, FlagValue>): string {
  const lines = [...KUBE_PROXY_FLAGS]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((spec) => `${spec.name}=${flagValueText(spec, given.get(spec.name))}`);
  return header('flags') + lines.join('\n') + '\n';
}

/** What the metrics server needs to answer the z-pages; a page left out is not served (404). */
export interface ZPages {
  readonly statusz?: () => string;
  readonly flagz?: () => string;
}
