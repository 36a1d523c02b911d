/**
 * Small formatting helpers whose output must match Go's exactly. IP/CIDR parsing, containment and
 * loopback checks come from @kube-proxy/core (model/ip.ts), the one implementation.
 */
import { isLoopbackIP, parseIP } from '@kube-proxy/core';

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

/**
 * Whether `ip` is an IPv4 loopback address (127.0.0.0/8, Go's `ip.To4() != nil && ip.IsLoopback()`),
 * for upstream's NodePortAddresses.ContainsIPv4Loopback. Parsing is @kube-proxy/core's.
 */
export function isIPv4Loopback(ip: string): boolean {
  const addr = parseIP(ip);
  return addr !== undefined && addr.family === 'IPv4' && isLoopbackIP(addr);
}

/** Whether `ip` is written as an IPv6 address (contains a colon): a notation check, not a parse. */
export function isIPv6String(ip: string): boolean {
  return ip.includes(':');
}
