/**
 * The node addresses IPVS node ports get a virtual server on. Upstream's IPVS proxier creates one
 * virtual server per node IP and node port (there is no "any local address" in IPVS): with no
 * --nodeport-addresses it takes every local address of the family except those on kube-ipvs0 and
 * IPv6 link-local ones (its netlink handle's isValidForSet), and it never serves node ports on
 * loopback (--iptables-localhost-nodeports is an iptables-mode flag).
 * Core's planNodePortAddresses makes the selection; the caller supplies the local addresses.
 */
import { cidrContains, isLoopbackIP, planNodePortAddresses, type IPFamily, type NodePortAddressSelection } from '@kube-proxy/core';

/**
 * Sorted, de-duplicated node IPs of `family` for node-port virtual servers. `localAddresses` are the
 * node's addresses (all families, kube-ipvs0's excluded), used when the selection is `all`.
 */
export function nodePortIPs(family: IPFamily, selection: NodePortAddressSelection, localAddresses: readonly string[]): string[] {
  const plan = planNodePortAddresses(family, selection, false);
  const isIPv6 = family === 'IPv6';
  const candidates = plan.allLocalAddresses ? localAddresses.filter((ip) => ip.includes(':') === isIPv6) : plan.addresses;
  const out = new Set<string>();
  for (const ip of candidates) {
    if (isLoopbackIP(ip)) continue;
    if (plan.allLocalAddresses && isIPv6 && cidrContains('fe80::/10', ip)) continue;
    out.add(ip);
  }
  return [...out].sort();
}
