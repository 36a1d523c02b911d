import type { IPFamily } from './protocol.js';

/**
 * A parsed IP address. IPv4 addresses (including IPv4-mapped IPv6 text such as `::ffff:1.2.3.4`) are
 * held as 4 bytes and IPv6 as 16, so the family follows from the length, as with Go's net.IP.To4().
 */
export interface IPAddress {
  readonly family: IPFamily;
  readonly bytes: Uint8Array;
}

/** A parsed CIDR block; `bytes` is the network address (host bits cleared). */
export interface CIDR {
  readonly family: IPFamily;
  readonly bytes: Uint8Array;
  readonly prefixLength: number;
  /** Canonical `network/prefix` text, e.g. `10.0.0.0/8`, `2001:db8::/32`. */
  readonly text: string;
}

/**
 * Parses an IPv4 or IPv6 address like k8s.io/utils/net.ParseIPSloppy (Go 1.16's net.ParseIP), which
 * upstream uses for config validation, Services and EndpointSlices alike: numbers may carry leading
 * zeros, read as decimal in IPv4 fields ("010.001.002.003" is 10.1.2.3) and as hex in IPv6 groups,
 * because older API servers accepted and stored such addresses. Zones (`%eth0`) are rejected.
 */
export function parseIP(text: string): IPAddress | undefined {
  if (typeof text !== 'string') return undefined;
  if (text.includes(':')) {
    const bytes = parseIPv6Bytes(text);
    if (bytes === undefined) return undefined;
    if (isV4Mapped(bytes)) return { family: 'IPv4', bytes: bytes.slice(12) };
    return { family: 'IPv6', bytes };
  }
  const bytes = parseIPv4Bytes(text);
  return bytes === undefined ? undefined : { family: 'IPv4', bytes };
}

/**
 * The family of an IP address string, or undefined when it is not an IP address. IPv4-mapped IPv6 text
 * (`::ffff:1.2.3.4`) is IPv4, as Go's `ip.To4() != nil` (netutils.IPFamilyOf) has it.
 */
export function ipFamilyOf(ip: string): IPFamily | undefined {
  return parseIP(ip)?.family;
}

export function isValidIP(ip: string): boolean {
  return parseIP(ip) !== undefined;
}

/** The canonical text of an address (no leading zeros, compressed lower-case IPv6), or undefined. */
export function canonicalIP(ip: string): string | undefined {
  const parsed = parseIP(ip);
  return parsed === undefined ? undefined : formatIP(parsed);
}

export function formatIP(ip: IPAddress): string {
  return ip.bytes.length === 4 ? formatIPv4(ip.bytes) : formatIPv6(ip.bytes);
}

/**
 * Go's net.IP.IsLoopback: 127.0.0.0/8 (also when written IPv4-mapped, `::ffff:127.0.0.1`) or `::1`.
 * Unparseable text is not a loopback address.
 */
export function isLoopbackIP(ip: string | IPAddress): boolean {
  const addr = typeof ip === 'string' ? parseIP(ip) : ip;
  if (addr === undefined) return false;
  const b = addr.bytes;
  if (b.length === 4) return b[0] === 127;
  for (let i = 0; i < 15; i++) if (b[i] !== 0) return false;
  return b[15] === 1;
}

/**
 * Parses `address/prefix` like netutils.ParseCIDRSloppy: the address as parseIP reads it, the prefix
 * in decimal (leading zeros allowed) and at most 32 or 128 bits for the address's notation. Host bits
 * are cleared, as Go's net.ParseCIDR does. The family comes from the notation of the address part (a
 * CIDR written in IPv6 notation is IPv6, even `::ffff:0:0/96`, which Go would label IPv4).
 */
export function parseCIDR(text: string): CIDR | undefined {
  if (typeof text !== 'string') return undefined;
  const slash = text.indexOf('/');
  if (slash <= 0 || slash !== text.lastIndexOf('/')) return undefined;
  const addressText = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  if (!/^[0-9]+$/.test(prefixText)) return undefined;
  const prefixLength = Number(prefixText);

  const isV6 = addressText.includes(':');
  const bytes = isV6 ? parseIPv6Bytes(addressText) : parseIPv4Bytes(addressText);
  if (bytes === undefined || prefixLength > bytes.length * 8) return undefined;

  const network = maskBytes(bytes, prefixLength);
  const family: IPFamily = isV6 ? 'IPv6' : 'IPv4';
  const addr = isV6 ? formatIPv6(network) : formatIPv4(network);
  return { family, bytes: network, prefixLength, text: `${addr}/${prefixLength}` };
}

export function isValidCIDR(text: string): boolean {
  return parseCIDR(text) !== undefined;
}

/**
 * Whether `ip` lies inside `cidr`, as Go's (*net.IPNet).Contains. Unparseable input and mixed families
 * yield false, with Go's one exception: a block whose network is IPv4-mapped (`::ffff:0:0/96`,
 * `::ffff:10.0.0.0/104`) holds the IPv4 addresses it maps (Go compares in the network's To4() form).
 */
export function cidrContains(cidr: string | CIDR, ip: string | IPAddress): boolean {
  const block = typeof cidr === 'string' ? parseCIDR(cidr) : cidr;
  const addr = typeof ip === 'string' ? parseIP(ip) : ip;
  if (block === undefined || addr === undefined) return false;
  // v4-mapped address text was already folded to 4 bytes by parseIP.
  if (block.bytes.length === addr.bytes.length) return prefixMatches(block.bytes, addr.bytes, block.prefixLength);
  if (addr.bytes.length === 4 && block.prefixLength >= 96 && isV4Mapped(block.bytes)) {
    return prefixMatches(block.bytes.subarray(12), addr.bytes, block.prefixLength - 96);
  }
  return false;
}

/**
 * netutils.IsDualStackCIDRStrings: every entry is a valid CIDR and both families occur (by the
 * notation-based family of parseCIDR).
 */
export function isDualStackCIDRs(cidrs: readonly string[]): boolean {
  let v4 = false;
  let v6 = false;
  for (const text of cidrs) {
    const cidr = parseCIDR(text);
    if (cidr === undefined) return false;
    if (cidr.family === 'IPv4') v4 = true;
    else v6 = true;
  }
  return v4 && v6;
}

/** `0.0.0.0/0` or `::/0`: a block that matches every address of its family. */
export function isZeroCIDR(cidr: CIDR): boolean {
  return cidr.prefixLength === 0;
}

/** Four decimal fields; like Go 1.16's dtoi, a field may have any number of leading zeros. */
function parseIPv4Bytes(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i];
    if (!/^[0-9]+$/.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes[i] = value;
  }
  return bytes;
}

function parseIPv6Bytes(text: string): Uint8Array | undefined {
  if (text.length < 2 || text.includes('%')) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;

  const head = parseGroups(halves[0], halves.length === 1);
  if (head === undefined) return undefined;
  let tail: number[] = [];
  if (halves.length === 2) {
    const parsedTail = parseGroups(halves[1], true);
    if (parsedTail === undefined) return undefined;
    tail = parsedTail;
  }

  const total = head.length + tail.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return undefined;

  const bytes = new Uint8Array(16);
  head.forEach((group, i) => writeGroup(bytes, i, group));
  const tailStart = 8 - tail.length;
  tail.forEach((group, i) => writeGroup(bytes, tailStart + i, group));
  return bytes;
}

/**
 * Parses `a:b:c` (possibly empty) into 16-bit groups; a trailing dotted quad counts as two groups. Like
 * Go 1.16's xtoi, a group may have any number of leading zeros as long as its value fits 16 bits.
 */
function parseGroups(text: string, mayEndWithIPv4: boolean): number[] | undefined {
  if (text === '') return [];
  const parts = text.split(':');
  const groups: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (mayEndWithIPv4 && i === parts.length - 1 && part.includes('.')) {
      const v4 = parseIPv4Bytes(part);
      if (v4 === undefined) return undefined;
      groups.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      continue;
    }
    if (!/^[0-9a-fA-F]+$/.test(part)) return undefined;
    const group = parseInt(part, 16);
    if (group > 0xffff) return undefined;
    groups.push(group);
  }
  return groups;
}

function writeGroup(bytes: Uint8Array, index: number, group: number): void {
  bytes[index * 2] = group >> 8;
  bytes[index * 2 + 1] = group & 0xff;
}

function isV4Mapped(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

function formatIPv4(bytes: Uint8Array): string {
  return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
}

/** RFC 5952 text: the longest run (first on ties) of two or more zero groups becomes `::`. */
function formatIPv6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push((bytes[i * 2] << 8) | bytes[i * 2 + 1]);

  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }

  const hex = (from: number, to: number): string =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(':');
  if (bestStart < 0) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}

function maskBytes(bytes: Uint8Array, prefixLength: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const bits = Math.max(0, Math.min(8, prefixLength - i * 8));
    out[i] = bytes[i] & ((0xff << (8 - bits)) & 0xff);
  }
  return out;
}

function prefixMatches(network: Uint8Array, addr: Uint8Array, prefixLength: number): boolean {
  const fullBytes = prefixLength >> 3;
  for (let i = 0; i < fullBytes; i++) if (network[i] !== addr[i]) return false;
  const remaining = prefixLength & 7;
  if (remaining === 0) return true;
  const mask = (0xff << (8 - remaining)) & 0xff;
  return (network[fullBytes] & mask) === (addr[fullBytes] & mask);
}
