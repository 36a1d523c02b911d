import { parseIP } from '../semantics/model/ip.js';

/**
 * host:port text helpers with the semantics of the Go code upstream config handling relies on
 * (net.SplitHostPort, proxyutil.AppendPortIfNeeded). IP and CIDR text is parsed by model/ip.ts alone
 * (netutils.ParseIPSloppy / ParseCIDRSloppy semantics).
 */

/** net.SplitHostPort: "host:port" or "[v6]:port". Throws with Go's wording on malformed input. */
export function splitHostPort(text: string): { host: string; port: string } {
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) throw new Error(`address ${text}: missing ']' in address`);
    const rest = text.slice(end + 1);
    if (rest === '') throw new Error(`address ${text}: missing port in address`);
    if (!rest.startsWith(':') || rest.slice(1).includes(':')) {
      throw new Error(`address ${text}: unexpected characters after ']'`);
    }
    return { host: text.slice(1, end), port: rest.slice(1) };
  }
  const colon = text.lastIndexOf(':');
  if (colon < 0) throw new Error(`address ${text}: missing port in address`);
  const host = text.slice(0, colon);
  if (host.includes(':')) throw new Error(`address ${text}: too many colons in address`);
  if (host.includes('[') || host.includes(']')) throw new Error(`address ${text}: unexpected '[' or ']' in address`);
  return { host, port: text.slice(colon + 1) };
}

/**
 * proxyutil.AppendPortIfNeeded: "1.2.3.4" → "1.2.3.4:port", "::1" → "[::1]:port"; anything that
 * already has a port, or is not an IP, is returned unchanged (validation reports the latter).
 */
export function appendPortIfNeeded(address: string, port: number): string {
  try {
    splitHostPort(address);
    return address;
  } catch {
    // no port yet
  }
  const ip = parseIP(address);
  if (ip === undefined) return address;
  // ip.To4() != nil: IPv4, also when written IPv4-mapped ("::ffff:10.0.0.1" → "::ffff:10.0.0.1:port", as upstream).
  return ip.family === 'IPv4' ? `${address}:${port}` : `[${address}]:${port}`;
}
