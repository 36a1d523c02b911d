import type { NetworkInterfaceInfo } from 'node:os';
import { cidrContains, ipFamilyOf, isLoopbackIP, parseCIDR } from '../model/ip.js';
import type { IPFamily } from '../model/protocol.js';
import type { Logger } from '../../host/logger.js';
import type { NodePortAddressSelection } from './node-port-address-plan.js';

/** `--nodeport-addresses primary`: the node's primary IP(s) (upstream kubeproxyconfig.NodePortAddressesPrimary). */
export const NODE_PORT_ADDRESSES_PRIMARY = 'primary';

/** os.networkInterfaces()'s shape (injected for tests). */
export type NetworkInterfaces = () => NodeJS.Dict<NetworkInterfaceInfo[]>;

/**
 * nodePortAddresses of one family, parsed once at startup: upstream's proxyutil.NodePortAddresses.
 */
export interface NodePortAddresses {
  readonly family: IPFamily;
  /** The CIDRs of this family (a zero CIDR when none was given). */
  readonly cidrs: readonly string[];
  /** Every local address matches (no CIDR of this family, or a /0). */
  readonly matchAll: boolean;
  /** Whether 127.0.0.0/8 addresses are selected (gates localhost NodePorts and route_localnet). */
  readonly containsIPv4Loopback: boolean;
  /**
   * A CIDR of this family whose network address is loopback was given (e.g. 127.0.0.0/8, ::1/128),
   * not merely covered by a /0: upstream v1.37's NodePortAddresses.ContainsExplicitLoopback, which
   * turns on nftables mode's localhost NodePort listeners (KEP-6032) when its gate is on.
   */
  readonly containsExplicitLoopback: boolean;
}

/**
 * Parses config.nodePortAddresses for one family: `null`/`[]` → every address; CIDRs of the other
 * family are ignored (none left → every address, as upstream); `primary` → the node's IP of this family
 * as a /32 or /128 (as upstream's server.go rewrites it).
 */
export function parseNodePortAddresses(
  config: readonly string[] | null,
  family: IPFamily,
  nodeIP: string | undefined,
  logger: Logger,
): NodePortAddresses {
  const cidrs: string[] = [];
  for (const raw of config ?? []) {
    const entry = raw.trim();
    if (entry === NODE_PORT_ADDRESSES_PRIMARY) {
      if (nodeIP && ipFamilyOf(nodeIP) === family) {
        cidrs.push(`${nodeIP}/${family === 'IPv6' ? 128 : 32}`);
      } else {
        logger.warn('nodePortAddresses "primary" given but the node IP of this family is unknown; ignoring it', {
          family,
        });
      }
      continue;
    }
    const f = parseCIDR(entry)?.family;
    if (f === undefined) {
      logger.error('Ignoring invalid nodePortAddresses entry', { entry });
      continue;
    }
    if (f === family) cidrs.push(entry);
  }
  if (cidrs.length === 0) cidrs.push(family === 'IPv6' ? '::/0' : '0.0.0.0/0');
  const matchAll = cidrs.some((c) => c.endsWith('/0'));
  let containsIPv4Loopback = false;
  if (family === 'IPv4') {
    containsIPv4Loopback = cidrs.some((c) => cidrContains(c, '127.0.0.0') || cidrContains(c, '127.0.0.1'));
  }
  const containsExplicitLoopback = cidrs.some((c) => {
    const block = parseCIDR(c);
    return block !== undefined && block.prefixLength > 0 && isLoopbackIP(block.text.slice(0, block.text.indexOf('/')));
  });
  return { family, cidrs, matchAll, containsIPv4Loopback, containsExplicitLoopback };
}

/**
 * The selection to render: all addresses, or the host's addresses of this family inside the CIDRs
 * (upstream's NodePortAddresses.GetNodeIPs over net.Interfaces). Resolved on every sync, as upstream.
 */
export function resolveNodePortAddresses(
  npa: NodePortAddresses,
  interfaces: NetworkInterfaces,
): NodePortAddressSelection {
  if (npa.matchAll) return { all: true };
  const blocks = npa.cidrs.map(parseCIDR).filter((c) => c !== undefined);
  const ips: string[] = [];
  const seen = new Set<string>();
  for (const infos of Object.values(interfaces())) {
    for (const info of infos ?? []) {
      const fam = String(info.family);
      const isV6 = fam === 'IPv6' || fam === '6';
      if (isV6 !== (npa.family === 'IPv6')) continue;
      // Link-local IPv6 addresses carry a zone in some places; the address itself is plain.
      const address = info.address.split('%')[0] as string;
      if (seen.has(address)) continue;
      if (blocks.some((b) => cidrContains(b, address))) {
        seen.add(address);
        ips.push(address);
      }
    }
  }
  return { all: false, ips };
}
