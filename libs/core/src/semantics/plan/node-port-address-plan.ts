/**
 * Which of this node's addresses node ports answer on, for one IP family: upstream's
 * nodePortAddresses handling (NewProxier turns localhost node ports off unless an IPv4 loopback
 * address is selected; IPv6 never serves them; a loopback address in the list is skipped, with an
 * error log upstream, when localhost node ports are off). Decided once per sync for every backend.
 */
import type { IPFamily } from '../model/protocol.js';
import { isLoopbackIP, parseIP } from '../model/ip.js';

/** The node-port address selection as the configuration resolves it: `all` = no --nodeport-addresses. */
export type NodePortAddressSelection = { readonly all: true } | { readonly all: false; readonly ips: readonly string[] };

export interface NodePortAddressPlan {
  /** Node ports answer on every local address of the node (no --nodeport-addresses). */
  readonly allLocalAddresses: boolean;
  /** With allLocalAddresses: except the family's loopback range (IPv6 always; IPv4 unless localhost node ports are on). */
  readonly excludeLoopback: boolean;
  /** Without allLocalAddresses: exactly these addresses of the family, in the order given. */
  readonly addresses: readonly string[];
  /**
   * Node ports also answer on 127.0.0.0/8 (IPv4 only, route_localnet): the flag is on and the
   * selection includes IPv4 loopback. Backends that honour it must also block off-node packets to
   * 127.0.0.0/8 (kubelet's "block incoming localnet connections").
   */
  readonly localhostNodePorts: boolean;
}

function isIPv4Loopback(ip: string): boolean {
  const addr = parseIP(ip);
  return addr !== undefined && addr.family === 'IPv4' && isLoopbackIP(addr);
}

const NO_ADDRESSES: readonly string[] = [];

/**
 * The plan for `family` from the selection and --iptables-localhost-nodeports. Addresses of the
 * other family are left out by their notation (a `:` means IPv6), as the selection's own parser wrote them.
 */
export function planNodePortAddresses(family: IPFamily, selection: NodePortAddressSelection, localhostNodePortsFlag: boolean): NodePortAddressPlan {
  const isIPv6 = family === 'IPv6';
  const localhostNodePorts = !isIPv6 && localhostNodePortsFlag && (selection.all || selection.ips.some(isIPv4Loopback));
  if (selection.all) {
    return { allLocalAddresses: true, excludeLoopback: isIPv6 || !localhostNodePorts, addresses: NO_ADDRESSES, localhostNodePorts };
  }
  const addresses: string[] = [];
  for (const ip of selection.ips) {
    if (ip.includes(':') !== isIPv6) continue;
    if (isLoopbackIP(ip) && !localhostNodePorts) continue;
    addresses.push(ip);
  }
  return { allLocalAddresses: false, excludeLoopback: false, addresses, localhostNodePorts };
}
