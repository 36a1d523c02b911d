/**
 * The keywords `nodePortAddresses` takes besides CIDRs (upstream v1.37, kubernetes PR #138427:
 * kubeproxyconfig.NodePortAddressesPrimary / …Localhost / …All). Each stands for CIDRs of each IP
 * family, and they mix freely with each other and with CIDRs. Keywords are lowercase, exactly: upstream
 * compares the string, so `Primary` is no keyword (and no CIDR, hence invalid).
 *
 * The expansion lives here, once, for every mode and for validation, explain and the dry run.
 */
import type { IPFamily } from '../model/protocol.js';
import { isLoopbackIP, ipFamilyOf } from '../model/ip.js';

/** The node's primary IP of each family, as the Node object (or --bind-address) gives it. */
export const NODE_PORT_ADDRESSES_PRIMARY = 'primary';
/** The loopback range of each family: 127.0.0.0/8 and ::1/128. */
export const NODE_PORT_ADDRESSES_LOCALHOST = 'localhost';
/** Every address of each family: 0.0.0.0/0 and ::/0. */
export const NODE_PORT_ADDRESSES_ALL = 'all';

export const NODE_PORT_ADDRESS_KEYWORDS: readonly string[] = [NODE_PORT_ADDRESSES_PRIMARY, NODE_PORT_ADDRESSES_LOCALHOST, NODE_PORT_ADDRESSES_ALL];

export type NodePortAddressKeyword = 'primary' | 'localhost' | 'all';

export function isNodePortAddressKeyword(entry: string): entry is NodePortAddressKeyword {
  return NODE_PORT_ADDRESS_KEYWORDS.includes(entry);
}

/** The loopback CIDR `localhost` stands for in `family`. */
export function loopbackCIDR(family: IPFamily): string {
  return family === 'IPv6' ? '::1/128' : '127.0.0.0/8';
}

/** The zero CIDR (`all`, and what an empty list of the family means) of `family`. */
export function zeroCIDR(family: IPFamily): string {
  return family === 'IPv6' ? '::/0' : '0.0.0.0/0';
}

/**
 * The CIDR a keyword stands for in `family`, or undefined when it stands for none there: `primary`
 * without a node IP of the family. A loopback node IP is what the node identity falls back to when the
 * Node gives none, so upstream's server.go skips it too (it is no primary address to serve on).
 */
export function keywordCIDR(keyword: NodePortAddressKeyword, family: IPFamily, nodeIP: string | undefined): string | undefined {
  switch (keyword) {
    case 'localhost':
      return loopbackCIDR(family);
    case 'all':
      return zeroCIDR(family);
    case 'primary':
      if (!nodeIP || ipFamilyOf(nodeIP) !== family || isLoopbackIP(nodeIP)) return undefined;
      return `${nodeIP}/${family === 'IPv6' ? 128 : 32}`;
  }
}
