/**
 * The ipsets upstream's IPVS proxier keeps (pkg/proxy/ipvs/ipset.go and proxier.go's ipsetInfo):
 * names, types and comments, with upstream's IPv6 naming (`KUBE-` becomes `KUBE-6-`, cut to
 * ipset's 31-character limit). The comments are upstream's too; ipset itself has no per-set
 * comment (its `comment` create option only enables per-entry comments, which upstream does not
 * use), so they travel with the definition for the iptables rules that match these sets.
 */
import type { IPFamily } from '@kube-proxy/core';

export type IpsetType = 'hash:ip' | 'hash:ip,port' | 'hash:ip,port,ip' | 'hash:ip,port,net' | 'bitmap:port';

/** Which upstream set (by its IPv4 name); the family's actual name is IpsetDefinition.name. */
export type IpsetRole =
  | 'KUBE-LOOP-BACK'
  | 'KUBE-CLUSTER-IP'
  | 'KUBE-EXTERNAL-IP'
  | 'KUBE-EXTERNAL-IP-LOCAL'
  | 'KUBE-LOAD-BALANCER'
  | 'KUBE-LOAD-BALANCER-FW'
  | 'KUBE-LOAD-BALANCER-LOCAL'
  | 'KUBE-LOAD-BALANCER-SOURCE-IP'
  | 'KUBE-LOAD-BALANCER-SOURCE-CIDR'
  | 'KUBE-NODE-PORT-TCP'
  | 'KUBE-NODE-PORT-LOCAL-TCP'
  | 'KUBE-NODE-PORT-UDP'
  | 'KUBE-NODE-PORT-LOCAL-UDP'
  | 'KUBE-NODE-PORT-SCTP-HASH'
  | 'KUBE-NODE-PORT-LOCAL-SCTP-HASH'
  | 'KUBE-HEALTH-CHECK-NODE-PORT'
  | 'KUBE-IPVS-IPS';

export interface IpsetDefinition {
  readonly role: IpsetRole;
  /** The kernel name for the family (`KUBE-6-…` for IPv6). */
  readonly name: string;
  readonly type: IpsetType;
  readonly family: IPFamily;
  readonly comment: string;
}

/** Upstream's defaults for hash sets (utilipset.DefaultHashSize / DefaultMaxElem) and bitmap ports (DefaultPortRange). */
export const IPSET_HASH_SIZE = 1024;
export const IPSET_MAX_ELEM = 65536;
export const IPSET_PORT_RANGE = '0-65535';
/** ipset's IPSET_MAXNAMELEN (32) less its NUL. */
export const IPSET_NAME_MAX_LENGTH = 31;

const CATALOGUE: ReadonlyArray<readonly [IpsetRole, IpsetType, string]> = [
  ['KUBE-LOOP-BACK', 'hash:ip,port,ip', 'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose'],
  ['KUBE-CLUSTER-IP', 'hash:ip,port', 'Kubernetes service cluster ip + port for masquerade purpose'],
  ['KUBE-EXTERNAL-IP', 'hash:ip,port', 'Kubernetes service external ip + port for masquerade and filter purpose'],
  ['KUBE-EXTERNAL-IP-LOCAL', 'hash:ip,port', 'Kubernetes service external ip + port with externalTrafficPolicy=local'],
  ['KUBE-LOAD-BALANCER', 'hash:ip,port', 'Kubernetes service lb portal'],
  ['KUBE-LOAD-BALANCER-FW', 'hash:ip,port', 'Kubernetes service load balancer ip + port for load balancer with sourceRange'],
  ['KUBE-LOAD-BALANCER-LOCAL', 'hash:ip,port', 'Kubernetes service load balancer ip + port with externalTrafficPolicy=local'],
  ['KUBE-LOAD-BALANCER-SOURCE-IP', 'hash:ip,port,ip', 'Kubernetes service load balancer ip + port + source IP for packet filter purpose'],
  ['KUBE-LOAD-BALANCER-SOURCE-CIDR', 'hash:ip,port,net', 'Kubernetes service load balancer ip + port + source cidr for packet filter purpose'],
  ['KUBE-NODE-PORT-TCP', 'bitmap:port', 'Kubernetes nodeport TCP port for masquerade purpose'],
  ['KUBE-NODE-PORT-LOCAL-TCP', 'bitmap:port', 'Kubernetes nodeport TCP port with externalTrafficPolicy=local'],
  ['KUBE-NODE-PORT-UDP', 'bitmap:port', 'Kubernetes nodeport UDP port for masquerade purpose'],
  ['KUBE-NODE-PORT-LOCAL-UDP', 'bitmap:port', 'Kubernetes nodeport UDP port with externalTrafficPolicy=local'],
  ['KUBE-NODE-PORT-SCTP-HASH', 'hash:ip,port', "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'"],
  ['KUBE-NODE-PORT-LOCAL-SCTP-HASH', 'hash:ip,port', "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'"],
  ['KUBE-HEALTH-CHECK-NODE-PORT', 'bitmap:port', 'Kubernetes health check node port'],
  ['KUBE-IPVS-IPS', 'hash:ip', 'Addresses on the ipvs interface'],
];

/** Upstream NewIPSet's naming: IPv6 sets are `KUBE-6-…`, cut to 31 characters. */
export function ipsetName(role: IpsetRole, family: IPFamily): string {
  if (family === 'IPv4') return role;
  return role.replace(/^KUBE-/, 'KUBE-6-').slice(0, IPSET_NAME_MAX_LENGTH);
}

const BY_FAMILY: Record<IPFamily, readonly IpsetDefinition[]> = {
  IPv4: CATALOGUE.map(([role, type, comment]) => ({ role, name: ipsetName(role, 'IPv4'), type, family: 'IPv4' as const, comment })),
  IPv6: CATALOGUE.map(([role, type, comment]) => ({ role, name: ipsetName(role, 'IPv6'), type, family: 'IPv6' as const, comment })),
};

/** Every set of `family`, in upstream's ipsetInfo order. */
export function ipsetCatalogue(family: IPFamily): readonly IpsetDefinition[] {
  return BY_FAMILY[family];
}
