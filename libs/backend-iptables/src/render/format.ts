/**
 * Small formatting and address helpers whose output must match Go's exactly.
 */

/**
 * Go's `fmt.Sprintf("%0.10f", 1.0/float64(n))` (upstream's computeProbability).
 *
 * Number.prototype.toFixed rounds the exact binary value like Go does, except on an exact tie,
 * where toFixed rounds up and Go rounds half to even. 1/n is an exact tie at 10 decimals only for
 * n = 2048 (1/2048 = 0.00048828125): 10^10/n has a fractional part of exactly .5 only when
 * n = 2^11; for every other n, 1/n is either exact with ≤ 10 decimals or not a dyadic tie.
 */
export function computeProbability(n: number): string {
  if (n === 2048) return '0.0004882812';
  return (1 / n).toFixed(10);
}

const precomputed: string[] = ['<bad value>'];

/** Cached computeProbability(n) (upstream's precomputedProbabilities). */
export function probability(n: number): string {
  for (let i = precomputed.length; i <= n; i++) precomputed.push(computeProbability(i));
  return precomputed[n];
}

/**
 * The masquerade mark upstream's NewProxier builds: `fmt.Sprintf("%#08x", 1<<masqueradeBit)`.
 * Go zero-pads the digits to the width and then adds "0x", so bit 14 gives "0x00004000".
 * (Upstream's unit-test fake proxier sets the literal "0x4000" instead.)
 */
export function formatMasqueradeMark(masqueradeBit: number): string {
  if (!Number.isInteger(masqueradeBit) || masqueradeBit < 0 || masqueradeBit > 31) {
    throw new RangeError(`masqueradeBit must be an integer in [0, 31], got ${masqueradeBit}`);
  }
  return '0x' + (2 ** masqueradeBit).toString(16).padStart(8, '0');
}

/** Parses an IPv4 address into a 32-bit unsigned number, or null. */
function parseIPv4(ip: string): number | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  let v = 0;
  for (const p of parts) {
    if (p.length === 0 || p.length > 3 || !/^\d+$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    v = v * 256 + n;
  }
  return v;
}

/** Parses an IPv6 address (optionally with an embedded IPv4 tail) into a bigint, or null. */
function parseIPv6(ip: string): bigint | null {
  if (!ip.includes(':')) return null;
  let head = ip;
  const groups: number[] = [];
  const tail: number[] = [];
  const lastColon = ip.lastIndexOf(':');
  let v4Tail: number | null = null;
  if (ip.indexOf('.', lastColon) !== -1) {
    v4Tail = parseIPv4(ip.slice(lastColon + 1));
    if (v4Tail === null) return null;
    head = ip.slice(0, lastColon + 1) + '0:0';
  }
  const dbl = head.indexOf('::');
  const parseGroups = (s: string, into: number[]): boolean => {
    if (s === '') return true;
    for (const g of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return false;
      into.push(parseInt(g, 16));
    }
    return true;
  };
  if (dbl === -1) {
    if (!parseGroups(head, groups) || groups.length !== 8) return null;
  } else {
    if (head.indexOf('::', dbl + 1) !== -1) return null;
    if (!parseGroups(head.slice(0, dbl), groups) || !parseGroups(head.slice(dbl + 2), tail)) return null;
    const missing = 8 - groups.length - tail.length;
    if (missing < 1) return null;
    for (let i = 0; i < missing; i++) groups.push(0);
    groups.push(...tail);
  }
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(g);
  if (v4Tail !== null) v = (v & ~0xffffffffn) | BigInt(v4Tail);
  return v;
}

/** Whether `ip` lies in `cidr` (Go's (*net.IPNet).Contains; families must match). */
export function cidrContains(cidr: string, ip: string): boolean {
  const slash = cidr.indexOf('/');
  if (slash === -1) return false;
  const prefix = Number(cidr.slice(slash + 1));
  const base = cidr.slice(0, slash);
  const b4 = parseIPv4(base);
  if (b4 !== null) {
    const i4 = parseIPv4(ip);
    if (i4 === null || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) return false;
    if (prefix === 0) return true;
    const shift = 32 - prefix;
    return Math.floor(b4 / 2 ** shift) === Math.floor(i4 / 2 ** shift);
  }
  const b6 = parseIPv6(base);
  const i6 = parseIPv6(ip);
  if (b6 === null || i6 === null || !Number.isInteger(prefix) || prefix < 0 || prefix > 128) return false;
  const shift = BigInt(128 - prefix);
  return b6 >> shift === i6 >> shift;
}

/** Go's net.IP.IsLoopback: 127.0.0.0/8, ::1, or an IPv4-mapped 127.x address. */
export function isLoopback(ip: string): boolean {
  const v4 = parseIPv4(ip);
  if (v4 !== null) return v4 >>> 24 === 127;
  const v6 = parseIPv6(ip);
  if (v6 === null) return false;
  if (v6 === 1n) return true;
  return v6 >> 32n === 0xffffn && Number((v6 >> 24n) & 0xffn) === 127;
}

/** Whether `ip` is an IPv4 loopback address (127.0.0.0/8). */
export function isIPv4Loopback(ip: string): boolean {
  const v4 = parseIPv4(ip);
  return v4 !== null && v4 >>> 24 === 127;
}

/** Whether `ip` is written as an IPv6 address (contains a colon). */
export function isIPv6String(ip: string): boolean {
  return ip.includes(':');
}
