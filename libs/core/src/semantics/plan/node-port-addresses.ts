import type { NetworkInterfaceInfo } from 'node:os';
import { cidrContains, isLoopbackIP, parseCIDR, type CIDR } from '../model/ip.js';
import type { IPFamily } from '../model/protocol.js';
import type { Logger } from '../../host/logger.js';
import type { NodePortAddressSelection } from './node-port-address-plan.js';
import { NODE_PORT_ADDRESSES_PRIMARY, isNodePortAddressKeyword, keywordCIDR, zeroCIDR } from './node-port-address-keywords.js';

/** os.networkInterfaces()'s shape (injected for tests). */
export type NetworkInterfaces = () => NodeJS.Dict<NetworkInterfaceInfo[]>;

/**
 * nodePortAddresses of one family, parsed once at startup: upstream's proxyutil.NodePortAddresses.
 */
export interface NodePortAddresses {
  readonly family: IPFamily;
  /** The CIDRs of this family, keywords expanded (a zero CIDR when none was given). */
  readonly cidrs: readonly string[];
  /** Every local address matches (no CIDR of this family, `all`, or a /0). */
  readonly matchAll: boolean;
  /** Whether 127.0.0.0/8 addresses are selected (gates iptables' localhost NodePorts and route_localnet). */
  readonly containsIPv4Loopback: boolean;
  /**
   * Whether the loopback address of this family (127.0.0.1, ::1) is among the selected ones in any
   * way, the zero CIDR included: upstream's ContainsLoopback (PR #138427's first form).
   */
  readonly containsLoopback: boolean;
  /**
   * Whether loopback was asked for explicitly in this family: `localhost`, or a CIDR (not a /0) whose
   * network address is a loopback address (127.x.y.z/n, ::1/128). An empty list, `all` alone or a /0
   * is not explicit. Upstream v1.37's ContainsExplicitLoopback, which turns on nftables' localhost
   * NodePorts (KEP-6032) for the family.
   */
  readonly containsExplicitLoopback: boolean;
}

/**
 * Parses config.nodePortAddresses for one family: `null`/`[]` → every address; CIDRs of the other
 * family are ignored (none left → every address, as upstream); the keywords expand per family
 * (node-port-address-keywords.ts) as upstream's server.go rewrites them before the proxiers see them:
 * `primary` → the node's IP of this family as a /32 or /128 (nothing when unknown), `localhost` → the
 * family's loopback CIDR, `all` → its zero CIDR. Entries are expected to be validated already.
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
    if (isNodePortAddressKeyword(entry)) {
      const cidr = keywordCIDR(entry, family, nodeIP);
      if (cidr !== undefined) cidrs.push(cidr);
      else if (entry === NODE_PORT_ADDRESSES_PRIMARY) {
        logger.warn('nodePortAddresses "primary" given but the node IP of this family is unknown; ignoring it', { family });
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
  if (cidrs.length === 0) cidrs.push(zeroCIDR(family));
  const blocks = cidrs.map(parseCIDR).filter((c) => c !== undefined);
  const matchAll = blocks.some((b) => b.prefixLength === 0);
  // Upstream's test: the block's network address is a loopback address, or the block holds the start
  // of the family's loopback range (127.0.0.0, ::1). So 127.0.2.0/28 and 64.0.0.0/2 count, 128.0.0.0/1 not.
  const loopbackStart = family === 'IPv6' ? '::1' : '127.0.0.0';
  const networkIsLoopback = (b: CIDR): boolean => isLoopbackIP({ family: b.family, bytes: b.bytes });
  const containsLoopback = blocks.some((b) => networkIsLoopback(b) || cidrContains(b, loopbackStart));
  const containsExplicitLoopback = blocks.some((b) => b.prefixLength > 0 && networkIsLoopback(b));
  return { family, cidrs, matchAll, containsIPv4Loopback: family === 'IPv4' && containsLoopback, containsLoopback, containsExplicitLoopback };
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
