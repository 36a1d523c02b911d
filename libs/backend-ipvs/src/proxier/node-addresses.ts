/**
 * Where the IPVS proxier's node addresses come from (the candidates for node-port virtual servers and
 * the addresses external IPs are not bound for; state/node-port-ips.ts filters them):
 * - a real run lists the machine's interfaces on every sync, all but kube-ipvs0 (upstream's
 *   GetAllLocalAddressesExcept), and --nodeport-addresses CIDRs select among the same interfaces;
 * - --dry-run renders the node the input describes, not the machine it happens to run on: the Node
 *   object's InternalIP and ExternalIP addresses (every one of them, both families), plus the node
 *   IPs the run resolved (--bind-address, or those same addresses when there is no Node object).
 *   --nodeport-addresses CIDRs select among these, presented as the interfaces of that node.
 */
import type { NetworkInterfaceInfo } from 'node:os';
import type { NetworkInterfaces, V1Node } from '@kube-proxy/core';
import { KUBE_IPVS_DEVICE } from '../kernel/ipvs-kernel.js';

/** The Node address types that are IP addresses of the node (Hostname and the DNS types are names). */
const IP_ADDRESS_TYPES: ReadonlySet<string> = new Set(['InternalIP', 'ExternalIP']);

/** The Node object's IP addresses as written (any family, unvalidated: the filter decides). */
export function nodeObjectAddresses(node: V1Node | undefined): string[] {
  const out: string[] = [];
  for (const a of node?.status?.addresses ?? []) {
    if (IP_ADDRESS_TYPES.has(a.type) && typeof a.address === 'string') out.push(a.address);
  }
  return out;
}

/** Every interface address of the machine except kube-ipvs0's, without IPv6 zones (`fe80::1%eth0`). */
export function hostAddresses(interfaces: NetworkInterfaces): string[] {
  const out: string[] = [];
  for (const [name, infos] of Object.entries(interfaces())) {
    if (name === KUBE_IPVS_DEVICE) continue;
    for (const info of infos ?? []) out.push(info.address.split('%')[0] as string);
  }
  return out;
}

/**
 * `addresses` as one interface of the described node, so core's --nodeport-addresses resolution
 * (which reads interfaces) selects among the dry run's node addresses as it does among a host's.
 */
export function addressesAsInterfaces(addresses: readonly string[]): NetworkInterfaces {
  const infos = addresses.map(
    (address): NetworkInterfaceInfo =>
      address.includes(':')
        ? { address, family: 'IPv6', netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', mac: '00:00:00:00:00:00', internal: false, cidr: `${address}/128`, scopeid: 0 }
        : { address, family: 'IPv4', netmask: '255.255.255.255', mac: '00:00:00:00:00:00', internal: false, cidr: `${address}/32` },
  );
  return () => ({ node: infos });
}
