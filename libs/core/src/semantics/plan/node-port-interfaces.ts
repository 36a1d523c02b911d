/**
 * The interfaces node-port addresses are looked up on (upstream's GetNodeIPs reads net.Interfaces):
 * - a real run lists the machine's interfaces on every sync;
 * - a --dry-run renders the node the input describes, not the machine it happens to run on: the Node
 *   object's InternalIP and ExternalIP addresses (every one, both families) plus the node IPs the run
 *   resolved (--bind-address, or those same addresses), presented as that node's interfaces, so that
 *   --nodeport-addresses CIDRs (and `primary`) select among them exactly as among a host's.
 * One source for every kernel backend, so a dry run in any mode shows the same node-port addresses.
 */
import type { NetworkInterfaceInfo } from 'node:os';
import type { V1Node } from '@kubernetes/client-node';
import { canonicalIP, ipFamilyOf } from '../model/ip.js';
import type { IPFamily } from '../model/protocol.js';
import type { NetworkInterfaces } from './node-port-addresses.js';

/** The addresses of a node's loopback interface, which a Node object never lists. */
export const NODE_LOOPBACK_ADDRESSES: readonly string[] = ['127.0.0.1', '::1'];

/** The Node address types that are IP addresses of the node (Hostname and the DNS types are names). */
const IP_ADDRESS_TYPES: ReadonlySet<string> = new Set(['InternalIP', 'ExternalIP']);

/** The Node object's IP addresses as written (any family, unvalidated: whoever uses them filters). */
export function nodeObjectAddresses(node: V1Node | undefined): string[] {
  const out: string[] = [];
  for (const a of node?.status?.addresses ?? []) {
    if (IP_ADDRESS_TYPES.has(a.type) && typeof a.address === 'string') out.push(a.address);
  }
  return out;
}

/**
 * `addresses` as one interface of the described node, in canonical text (an IPv4-mapped address is the
 * IPv4 address it is, as Go parses it); text that is no IP address is left out.
 */
export function addressesAsInterfaces(addresses: readonly string[]): NetworkInterfaces {
  const infos: NetworkInterfaceInfo[] = [];
  for (const text of addresses) {
    const address = canonicalIP(text);
    if (address === undefined) continue;
    infos.push(
      ipFamilyOf(address) === 'IPv6'
        ? { address, family: 'IPv6', netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', mac: '00:00:00:00:00:00', internal: false, cidr: `${address}/128`, scopeid: 0 }
        : { address, family: 'IPv4', netmask: '255.255.255.255', mac: '00:00:00:00:00:00', internal: false, cidr: `${address}/32` },
    );
  }
  return () => ({ node: infos });
}

/** Where one proxier looks its node-port addresses up; fed this node's Node events. */
export class NodePortInterfaces {
  private described: readonly string[] = [];

  constructor(
    private readonly run: { readonly dryRun: boolean; readonly nodeName: string; readonly nodeIPs: Partial<Record<IPFamily, string>> },
    private readonly host: NetworkInterfaces,
  ) {}

  /** Records the Node object; true when a dry run's addresses changed (its node ports must be rendered again). */
  nodeEvent(node: V1Node, deleted: boolean): boolean {
    if (node.metadata?.name !== this.run.nodeName) return false;
    const addresses = deleted ? [] : nodeObjectAddresses(node);
    const changed = addresses.join() !== this.described.join();
    this.described = addresses;
    return changed && this.run.dryRun;
  }

  /**
   * The dry run's node addresses (resolved node IPs first, then the Node object's) in canonical text:
   * an IPv4-mapped `::ffff:8.8.8.8` is the IPv4 address 8.8.8.8, as Go reads a Node's addresses;
   * text that is no IP address is left out.
   */
  describedAddresses(): string[] {
    const resolved = Object.values(this.run.nodeIPs).filter((ip): ip is string => typeof ip === 'string');
    const out: string[] = [];
    for (const text of [...resolved, ...this.described]) {
      const ip = canonicalIP(text);
      if (ip !== undefined) out.push(ip);
    }
    return out;
  }

  /**
   * The interfaces to resolve --nodeport-addresses against now. A dry run's node also has its loopback
   * interface (127.0.0.1, ::1), as every node does, so `localhost` and loopback CIDRs select there what
   * they select on a real node (each mode then decides whether it serves loopback).
   */
  interfaces(): NetworkInterfaces {
    return this.run.dryRun ? addressesAsInterfaces([...this.describedAddresses(), ...NODE_LOOPBACK_ADDRESSES]) : this.host;
  }
}
