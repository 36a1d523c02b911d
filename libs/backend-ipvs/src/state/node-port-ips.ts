/**
 * The node addresses IPVS node ports get a virtual server on. Upstream's IPVS proxier creates one
 * virtual server per node IP and node port (there is no "any local address" in IPVS), and for SCTP
 * one `nodeIP,sctp:port` entry per node IP in the hash sets:
 * - with no --nodeport-addresses it takes every local address except kube-ipvs0's, through its
 *   netlink handle's isValidForSet (pkg/proxy/ipvs/netlink_linux.go): addresses of the other family,
 *   IPv6 link-local (fe80::/10) and loopback (127.0.0.0/8, ::1) are dropped;
 * - with --nodeport-addresses, the local addresses inside those CIDRs (GetNodeIPs) minus loopback
 *   (--iptables-localhost-nodeports is an iptables-mode flag; IPVS never serves 127.0.0.1).
 * Upstream drops them silently and carries on; so does this: an address is a fact about the node,
 * never a reason to fail a sync. On top of upstream's filter, and for the same reason (no packet to
 * the node is ever addressed to them), unspecified addresses (0.0.0.0, ::) and IPv4-mapped IPv6 text
 * as an interface lists it (::ffff:a.b.c.d, which Go reads as IPv4 but no interface of either family
 * carries; a Node object's mapped address arrives here already canonical, as IPv4) are dropped,
 * text that is no IP address at all is dropped, and the rest is written in core's canonical form
 * and de-duplicated, so `010.0.0.1` and `10.0.0.1` are one address.
 */
import { cidrContains, formatIP, isLoopbackIP, parseIP, planNodePortAddresses, type IPFamily, type NodePortAddressSelection } from '@kube-proxy/core';

/** Why `ip` is not a node-port address of `family`, or undefined when it is one. */
export function unusableNodePortAddress(ip: string, family: IPFamily, allLocalAddresses: boolean): string | undefined {
  const parsed = typeof ip === 'string' ? parseIP(ip) : undefined;
  if (parsed === undefined) return 'not an IP address';
  if (ip.includes(':') && parsed.family === 'IPv4') return 'an IPv4-mapped IPv6 address';
  if (parsed.family !== family) return 'of the other family';
  if (isLoopbackIP(parsed)) return 'a loopback address';
  if (parsed.bytes.every((b) => b === 0)) return 'the unspecified address';
  // Only the "every local address" path drops link-local ones (upstream: an explicit CIDR may ask for them).
  if (allLocalAddresses && family === 'IPv6' && cidrContains('fe80::/10', parsed)) return 'an IPv6 link-local address';
  return undefined;
}

/**
 * Sorted, canonical, de-duplicated node IPs of `family` for node-port virtual servers.
 * `localAddresses` are the node's addresses (any family, kube-ipvs0's excluded), used when the
 * selection is `all`; otherwise the selection's addresses (already inside the CIDRs) are used.
 */
export function nodePortIPs(family: IPFamily, selection: NodePortAddressSelection, localAddresses: readonly string[]): string[] {
  const plan = planNodePortAddresses(family, selection, false);
  const candidates = plan.allLocalAddresses ? localAddresses : plan.addresses;
  const out = new Set<string>();
  for (const ip of candidates) {
    const parsed = parseIP(ip);
    if (parsed === undefined || unusableNodePortAddress(ip, family, plan.allLocalAddresses) !== undefined) continue;
    out.add(formatIP(parsed));
  }
  return [...out].sort();
}
