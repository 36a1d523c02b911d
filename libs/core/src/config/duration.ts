/**
 * Go `time.Duration` text, as used by metav1.Duration in KubeProxyConfiguration and by duration flags.
 * We keep config durations as strings (like the file) and convert at the edges, so the text must follow
 * Go exactly: a config written by us must read the same in upstream kube-proxy, and vice versa.
 */

const NS_PER_UNIT: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3, // U+00B5 micro sign
  'μs': 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

export class DurationError extends Error {
  override readonly name = 'DurationError';
}

/** Parses a Go duration ("1h0m0s", "30s", "1.5m", "-100ms", "0") to nanoseconds. */
export function parseDurationNs(text: string): number {
  const quoted = JSON.stringify(text);
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  // Go accepts a bare "0" (and "-0"/"+0") without a unit; any other number needs one.
  if (s === '0') return 0;
  if (s === '') throw new DurationError(`time: invalid duration ${quoted}`);

  let total = 0;
  while (s !== '') {
    // Always matches (possibly the empty string).
    const m = /^(\d*)(?:\.(\d*))?/.exec(s) ?? ['', '', ''];
    const whole = m[1] ?? '';
    const frac = m[2] ?? '';
    if (whole === '' && frac === '') throw new DurationError(`time: invalid duration ${quoted}`);
    s = s.slice(m[0].length);
    const unitMatch = /^[^\d.]+/.exec(s);
    if (!unitMatch) throw new DurationError(`time: missing unit in duration ${quoted}`);
    const unit = unitMatch[0];
    const scale = NS_PER_UNIT[unit];
    if (scale === undefined) {
      throw new DurationError(`time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`);
    }
    s = s.slice(unit.length);
    const value = Number(`${whole || '0'}.${frac || '0'}`);
    total += value * scale;
  }
  // Go truncates sub-nanosecond parts; so do we.
  const ns = Math.trunc(total);
  // Go durations are int64 nanoseconds.
  if (ns >= 2 ** 63) throw new DurationError(`time: invalid duration ${quoted}`);
  return sign * ns;
}

/** Parses a Go duration to milliseconds (fractional for sub-millisecond values). */
export function parseDuration(text: string): number {
  return parseDurationNs(text) / 1e6;
}

/** Formats nanoseconds the way Go's Duration.String does ("0s", "1.5s", "1m0s", "1h0m0s", "100ms"). */
export function formatDurationNs(nsInput: number): string {
  const ns = Math.round(nsInput);
  if (ns === 0) return '0s';
  const neg = ns < 0;
  const u = Math.abs(ns);
  let out: string;
  if (u < 1e9) {
    // Below one second Go picks the largest sub-second unit and prints a fraction of it.
    if (u < 1e3) out = `${u}ns`;
    else if (u < 1e6) out = `${fraction(u, 3)}µs`;
    else out = `${fraction(u, 6)}ms`;
  } else {
    const hours = Math.floor(u / 3600e9);
    const minutes = Math.floor((u % 3600e9) / 60e9);
    const secondsNs = u % 60e9;
    const seconds = `${fraction(secondsNs, 9)}s`;
    if (hours > 0) out = `${hours}h${minutes}m${seconds}`;
    else if (minutes > 0) out = `${minutes}m${seconds}`;
    else out = seconds;
  }
  return neg ? `-${out}` : out;
}

/** Formats milliseconds as a Go duration. */
export function formatDuration(ms: number): string {
  return formatDurationNs(ms * 1e6);
}

/** Re-renders any accepted duration text in Go's canonical form ("1m" → "1m0s"). */
export function normalizeDuration(text: string): string {
  return formatDurationNs(parseDurationNs(text));
}

/** `value / 10^digits` with the trailing zeros of the fraction (and a bare '.') removed. */
function fraction(value: number, digits: number): string {
  const scale = 10 ** digits;
  const whole = Math.floor(value / scale);
  const rest = value % scale;
  if (rest === 0) return String(whole);
  const frac = String(rest).padStart(digits, '0').replace(/0+$/, '');
  return `${whole}.${frac}`;
}
