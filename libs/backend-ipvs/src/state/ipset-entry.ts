/**
 * Set entries in the notation upstream's utilipset.Entry.String() builds and `ipset save` prints
 * (checked against ipset 7.17 in a network namespace): `IP,proto:port` (hash:ip,port),
 * `IP,proto:port,IP2` (hash:ip,port,ip), `IP,proto:port,CIDR` (hash:ip,port,net), the bare port
 * (bitmap:port: ipset accepts `tcp:30080` but saves `30080`, so the bare port is what a later diff
 * against `ipset save` compares) and the bare IP (hash:ip). IPv6 addresses are never bracketed.
 */
import type { Protocol } from '@kube-proxy/core';

function proto(protocol: Protocol): string {
  return protocol.toLowerCase();
}

/** hash:ip,port */
export function ipPortEntry(ip: string, protocol: Protocol, port: number): string {
  return `${ip},${proto(protocol)}:${port}`;
}

/** hash:ip,port,ip */
export function ipPortIPEntry(ip: string, protocol: Protocol, port: number, ip2: string): string {
  return `${ip},${proto(protocol)}:${port},${ip2}`;
}

/**
 * hash:ip,port,net. A full-length net (`/32`, `/128`) is written as the bare address, because that
 * is how `ipset save` prints it (seen with ipset 7.17 on the QEMU kernel): written with its prefix,
 * every sync would find it "changed" and rewrite the source-range entry.
 */
export function ipPortNetEntry(ip: string, protocol: Protocol, port: number, cidr: string): string {
  const net = cidr.endsWith(cidr.includes(':') ? '/128' : '/32') ? cidr.slice(0, cidr.lastIndexOf('/')) : cidr;
  return `${ip},${proto(protocol)}:${port},${net}`;
}

/** bitmap:port */
export function portEntry(port: number): string {
  return String(port);
}
