/**
 * Where the IPVS proxier's node addresses come from (the candidates for node-port virtual servers and
 * the addresses external IPs are not bound for; state/node-port-ips.ts filters them):
 * - a real run lists the machine's interfaces on every sync, all but kube-ipvs0 (upstream's
 *   GetAllLocalAddressesExcept), and --nodeport-addresses CIDRs select among the same interfaces;
 * - --dry-run renders the node the input describes, not the machine it happens to run on: the Node
 *   object's InternalIP and ExternalIP addresses (every one of them, both families), plus the node
 *   IPs the run resolved (--bind-address, or those same addresses when there is no Node object).
 *   --nodeport-addresses CIDRs select among these, presented as the interfaces of that node (core's
 *   nodeObjectAddresses and addressesAsInterfaces, which every kernel backend's dry run uses).
 */
import type { NetworkInterfaces } from '@kube-proxy/core';
import { KUBE_IPVS_DEVICE } from '../kernel/ipvs-kernel.js';

/** Every interface address of the machine except kube-ipvs0's, without IPv6 zones (`fe80::1%eth0`). */
export function hostAddresses(interfaces: NetworkInterfaces): string[] {
  const out: string[] = [];
  for (const [name, infos] of Object.entries(interfaces())) {
    if (name === KUBE_IPVS_DEVICE) continue;
    for (const info of infos ?? []) out.push(info.address.split('%')[0] as string);
  }
  return out;
}
