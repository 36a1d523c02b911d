/**
 * Upstream's ipsetWithIptablesChain (pkg/proxy/ipvs/proxier.go): the rules that are nothing but
 * "packet in set S → jump to T", each written only when its set has entries (writeIptablesRules).
 * The order is upstream's and matters within a chain: the -LOCAL node-port sets RETURN before the
 * all-node-ports sets mark for masquerade, and the source-range sets RETURN before the
 * KUBE-SOURCE-RANGES-FIREWALL's final DROP.
 */
import type { IpsetRole } from '../state/ipset-catalogue.js';
import type { IpsetView } from './ipset-view.js';
import { KUBE_LOAD_BALANCER, KUBE_MARK_MASQ, KUBE_NODE_PORT, KUBE_POSTROUTING, KUBE_PROXY_FIREWALL, KUBE_SERVICES, KUBE_SOURCE_RANGES_FIREWALL } from './owned-chains.js';
import type { RuleLines } from './rule-lines.js';

export interface SetMatchRule {
  readonly set: IpsetRole;
  readonly table: 'nat' | 'filter';
  readonly chain: string;
  readonly target: string;
  /** xt_set's direction flags: `dst`, `dst,dst`, `dst,dst,src`. */
  readonly matchType: string;
  /** `-p PROTO` before the match (node-port sets are per protocol). */
  readonly protocol?: 'tcp' | 'udp' | 'sctp';
}

export const SET_MATCH_RULES: readonly SetMatchRule[] = [
  { set: 'KUBE-LOOP-BACK', table: 'nat', chain: KUBE_POSTROUTING, target: 'MASQUERADE', matchType: 'dst,dst,src' },
  { set: 'KUBE-LOAD-BALANCER', table: 'nat', chain: KUBE_SERVICES, target: KUBE_LOAD_BALANCER, matchType: 'dst,dst' },
  { set: 'KUBE-LOAD-BALANCER-LOCAL', table: 'nat', chain: KUBE_LOAD_BALANCER, target: 'RETURN', matchType: 'dst,dst' },
  { set: 'KUBE-NODE-PORT-LOCAL-TCP', table: 'nat', chain: KUBE_NODE_PORT, target: 'RETURN', matchType: 'dst', protocol: 'tcp' },
  { set: 'KUBE-NODE-PORT-TCP', table: 'nat', chain: KUBE_NODE_PORT, target: KUBE_MARK_MASQ, matchType: 'dst', protocol: 'tcp' },
  { set: 'KUBE-NODE-PORT-LOCAL-UDP', table: 'nat', chain: KUBE_NODE_PORT, target: 'RETURN', matchType: 'dst', protocol: 'udp' },
  { set: 'KUBE-NODE-PORT-UDP', table: 'nat', chain: KUBE_NODE_PORT, target: KUBE_MARK_MASQ, matchType: 'dst', protocol: 'udp' },
  { set: 'KUBE-NODE-PORT-LOCAL-SCTP-HASH', table: 'nat', chain: KUBE_NODE_PORT, target: 'RETURN', matchType: 'dst,dst', protocol: 'sctp' },
  { set: 'KUBE-NODE-PORT-SCTP-HASH', table: 'nat', chain: KUBE_NODE_PORT, target: KUBE_MARK_MASQ, matchType: 'dst,dst', protocol: 'sctp' },
  { set: 'KUBE-LOAD-BALANCER-FW', table: 'filter', chain: KUBE_PROXY_FIREWALL, target: KUBE_SOURCE_RANGES_FIREWALL, matchType: 'dst,dst' },
  { set: 'KUBE-LOAD-BALANCER-SOURCE-CIDR', table: 'filter', chain: KUBE_SOURCE_RANGES_FIREWALL, target: 'RETURN', matchType: 'dst,dst,src' },
  { set: 'KUBE-LOAD-BALANCER-SOURCE-IP', table: 'filter', chain: KUBE_SOURCE_RANGES_FIREWALL, target: 'RETURN', matchType: 'dst,dst,src' },
];

/** `-m comment --comment COMMENT -m set --match-set NAME` for the set of `role` (the match type follows). */
export function setMatch(sets: IpsetView, role: IpsetRole): string[] {
  return ['-m', 'comment', '--comment', sets.comment(role), '-m', 'set', '--match-set', sets.name(role)];
}

/** The rules of SET_MATCH_RULES that belong to `table`, for the sets that have entries. */
export function writeSetMatchRules(out: RuleLines, sets: IpsetView, table: 'nat' | 'filter'): void {
  for (const r of SET_MATCH_RULES) {
    if (r.table !== table || sets.isEmpty(r.set)) continue;
    out.rule('-A', r.chain, r.protocol === undefined ? [] : ['-p', r.protocol], setMatch(sets, r.set), r.matchType, '-j', r.target);
  }
}
