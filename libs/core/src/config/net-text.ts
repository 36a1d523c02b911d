import { isIPv6 } from 'node:net';

/**
 * IP/CIDR/host:port text checks with the semantics of the Go helpers upstream validation relies on
 * (netutils.ParseIPSloppy, ParseCIDRSloppy, net.SplitHostPort). "Sloppy" means IPv4 octets may carry
 * leading zeros, which upstream still accepts for compatibility.
 */

export type IPFamilyNumber = 4 | 6;

function isIPv4Sloppy(text: string): boolean {
  const parts = text.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/** The family of an IP address, or undefined when `text` is not one. Zones ("%eth0") are not IPs. */
export function ipFamilyOf(text: string): IPFamilyNumber | undefined {
  if (isIPv4Sloppy(text)) return 4;
  if (!text.includes('%') && isIPv6(text)) return 6;
  return undefined;
}

export function isValidIP(text: string): boolean {
  return ipFamilyOf(text) !== undefined;
}

/**
 * Whether Go would treat the address as IPv4 (`ip.To4() != nil`): plain IPv4, or IPv4-mapped IPv6
 * such as "::ffff:10.0.0.1".
 */
export function isIPv4Like(text: string): boolean {
  const family = ipFamilyOf(text);
  if (family === 4) return true;
  if (family !== 6) return false;
  const m = /^::ffff:(.+)$/i.exec(text);
  return m !== null && isIPv4Sloppy(m[1]);
}

/** Parses "ip/prefix"; returns the address family, or undefined when not a valid CIDR. */
export function cidrFamilyOf(text: string): IPFamilyNumber | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = text.slice(0, slash);
  const prefix = text.slice(slash + 1);
  const family = ipFamilyOf(ip);
  if (family === undefined || !/^\d{1,3}$/.test(prefix)) return undefined;
  return Number(prefix) <= (family === 4 ? 32 : 128) ? family : undefined;
}

export function isValidCIDR(text: string): boolean {
  return cidrFamilyOf(text) !== undefined;
}

/** Two CIDRs, one of each family (netutils.IsDualStackCIDRStrings). */
export function isDualStackCIDRPair(cidrs: readonly string[]): boolean {
  if (cidrs.length !== 2) return false;
  const families = cidrs.map(cidrFamilyOf);
  return families.includes(4) && families.includes(6);
}

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
  const family = ipFamilyOf(address);
  if (family === undefined) return address;
  return isIPv4Like(address) ? `${address}:${port}` : `[${address}]:${port}`;
}
