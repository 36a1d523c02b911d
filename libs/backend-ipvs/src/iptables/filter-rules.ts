/**
 * The filter table of IPVS mode (upstream writeIptablesRules), in upstream's order:
 * - KUBE-PROXY-FIREWALL (from INPUT and FORWARD): LB IP:ports with source ranges
 *   (KUBE-LOAD-BALANCER-FW) → KUBE-SOURCE-RANGES-FIREWALL, which RETURNs allowed sources
 *   (KUBE-LOAD-BALANCER-SOURCE-CIDR, and -SOURCE-IP for the node itself) and DROPs the rest;
 * - KUBE-IPVS-OUT-FILTER (from OUTPUT): the node's own IPVS connections to an LB IP whose ranges
 *   leave the node out are dropped (lb-no-node-access.ts);
 * - KUBE-FORWARD: forward what is marked for masquerade, and the replies (RELATED,ESTABLISHED);
 * - KUBE-NODE-PORT (from INPUT): accept health-check node ports;
 * - KUBE-IPVS-FILTER (from INPUT, kubernetes#72236): a new connection to an address on kube-ipvs0
 *   (KUBE-IPVS-IPS) is rejected unless its IP:port is a service (cluster, LB, external, health
 *   check), so a VIP never exposes the node's other listening ports.
 * These rules after the set-match ones are written whether or not their sets are empty.
 */
import type { IPFamily } from '@kube-proxy/core';
import type { IpsetView } from './ipset-view.js';
import { lbNoNodeAccessEntries } from './lb-no-node-access.js';
import { KUBE_FORWARD, KUBE_IPVS_FILTER, KUBE_IPVS_OUT_FILTER, KUBE_NODE_PORT, KUBE_SOURCE_RANGES_FIREWALL } from './owned-chains.js';
import type { RuleLines } from './rule-lines.js';
import { setMatch, writeSetMatchRules } from './set-match-rules.js';

export interface FilterContext {
  readonly family: IPFamily;
  readonly sets: IpsetView;
  readonly mark: string;
}

function writeIpvsFilter(out: RuleLines, sets: IpsetView): void {
  for (const role of ['KUBE-LOAD-BALANCER', 'KUBE-CLUSTER-IP', 'KUBE-EXTERNAL-IP', 'KUBE-EXTERNAL-IP-LOCAL'] as const) {
    out.rule('-A', KUBE_IPVS_FILTER, '-m', 'set', '--match-set', sets.name(role), 'dst,dst', '-j', 'RETURN');
  }
  out.rule('-A', KUBE_IPVS_FILTER, '-m', 'set', '--match-set', sets.name('KUBE-HEALTH-CHECK-NODE-PORT'), 'dst', '-j', 'RETURN');
  out.rule('-A', KUBE_IPVS_FILTER, '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'set', '--match-set', sets.name('KUBE-IPVS-IPS'), 'dst', '-j', 'REJECT');
}

/** The filter rules (no header, chain lines or COMMIT), in upstream's order. */
export function writeFilterRules(out: RuleLines, ctx: FilterContext): void {
  writeSetMatchRules(out, ctx.sets, 'filter');
  out.rule('-A', KUBE_SOURCE_RANGES_FIREWALL, '-j', 'DROP');
  for (const e of lbNoNodeAccessEntries(ctx.sets, ctx.family)) {
    out.rule('-A', KUBE_IPVS_OUT_FILTER, '-s', e.ip, '-m', 'ipvs', '--vaddr', e.ip, '--vproto', e.protocol, '--vport', String(e.port), '-j', 'DROP');
  }
  out.rule('-A', KUBE_FORWARD, '-m', 'comment', '--comment', 'kubernetes forwarding rules', '-m', 'mark', '--mark', `${ctx.mark}/${ctx.mark}`, '-j', 'ACCEPT');
  out.rule('-A', KUBE_FORWARD, '-m', 'comment', '--comment', 'kubernetes forwarding conntrack rule', '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'ACCEPT');
  out.rule('-A', KUBE_NODE_PORT, setMatch(ctx.sets, 'KUBE-HEALTH-CHECK-NODE-PORT'), 'dst', '-j', 'ACCEPT');
  writeIpvsFilter(out, ctx.sets);
}
