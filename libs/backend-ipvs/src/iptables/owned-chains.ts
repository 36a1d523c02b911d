/**
 * The iptables chains IPVS mode owns and the jump rules that link them into the built-in chains,
 * as data (upstream pkg/proxy/ipvs: iptablesChains / iptablesCleanupChains, iptablesJumpChain).
 *
 * The chains are declared (`:CHAIN - [0:0]`) in every restore payload, so each sync flushes and
 * rewrites them; the jumps live in built-in chains the payload must not flush, so the proxier
 * ensures them one by one outside the restore (`iptables -C`, then `-I` when missing: upstream's
 * EnsureRule(Prepend, …)). `--cleanup` removes the jumps, then flushes and deletes the chains; a
 * flush monitor can check the jumps to tell that someone flushed a table.
 *
 * The lists themselves are cleanup.ts's IPVS_JUMPS / IPVS_CHAINS (one copy, in upstream's order);
 * this module adds the exact argument vectors the proxier writes and checks.
 */
import type { RulePosition, Table } from '@kube-proxy/netfilter-iptables';
import { IPVS_CHAINS, IPVS_JUMPS } from '../cleanup.js';

// Upstream's chain names (pkg/proxy/ipvs/proxier.go constants).
export const KUBE_SERVICES = 'KUBE-SERVICES';
export const KUBE_POSTROUTING = 'KUBE-POSTROUTING';
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ';
export const KUBE_NODE_PORT = 'KUBE-NODE-PORT';
export const KUBE_LOAD_BALANCER = 'KUBE-LOAD-BALANCER';
export const KUBE_FORWARD = 'KUBE-FORWARD';
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
export const KUBE_SOURCE_RANGES_FIREWALL = 'KUBE-SOURCE-RANGES-FIREWALL';
export const KUBE_IPVS_FILTER = 'KUBE-IPVS-FILTER';
export const KUBE_IPVS_OUT_FILTER = 'KUBE-IPVS-OUT-FILTER';

/** A chain IPVS mode owns: declared in every payload, deleted by --cleanup. */
export interface IpvsOwnedChain {
  readonly table: 'nat' | 'filter';
  readonly chain: string;
}

/** One jump from a built-in chain into an owned chain, as the proxier ensures it. */
export interface IpvsJumpRule {
  readonly table: Table;
  /** The built-in source chain (PREROUTING, OUTPUT, POSTROUTING, INPUT, FORWARD). */
  readonly from: string;
  /** The owned target chain. */
  readonly to: string;
  readonly comment: string;
  /** `-m comment --comment COMMENT -j TO`: the argv for `iptables -C/-I/-D -t TABLE FROM …`. */
  readonly args: readonly string[];
  /** Upstream's EnsureRule(utiliptables.Prepend, …): a missing jump is inserted first (`-I`). */
  readonly position: RulePosition;
}

/** Every owned chain, nat first, in upstream's iptablesChains order (the payload's declaration order). */
export const IPVS_IPTABLES_CHAINS: readonly IpvsOwnedChain[] = IPVS_CHAINS;

/** The owned chains of one table, in declaration order. */
export function ownedChainsOf(table: 'nat' | 'filter'): readonly string[] {
  return IPVS_IPTABLES_CHAINS.filter((c) => c.table === table).map((c) => c.chain);
}

/** Upstream's iptablesJumpChain with the argv the proxier ensures, in upstream's order. */
export const IPVS_IPTABLES_JUMPS: readonly IpvsJumpRule[] = IPVS_JUMPS.map((j) => {
  const comment = j.comment ?? '';
  return {
    table: j.table,
    from: j.from,
    to: j.to,
    comment,
    args: ['-m', 'comment', '--comment', comment, '-j', j.to],
    position: '-I',
  };
});
