/**
 * The nat table of IPVS mode (upstream writeIptablesRules / acceptIPVSTraffic): IPVS itself does
 * the DNAT, so nat only decides what to masquerade, by set matches, and accepts what IPVS serves.
 *
 * KUBE-SERVICES, in upstream's order:
 *   loopback sources RETURN; non-empty KUBE-LOAD-BALANCER → KUBE-LOAD-BALANCER; KUBE-CLUSTER-IP
 *   → KUBE-MARK-MASQ (every packet under --masquerade-all, non-local sources with a local
 *   detector, else `src,dst`: node-originated packets whose source is a VIP on kube-ipvs0);
 *   KUBE-EXTERNAL-IP → KUBE-MARK-MASQ plus two ACCEPTs (off-machine traffic, and destinations that
 *   are local addresses), KUBE-EXTERNAL-IP-LOCAL the two ACCEPTs only; local destinations →
 *   KUBE-NODE-PORT; finally ACCEPT what is in KUBE-CLUSTER-IP / KUBE-LOAD-BALANCER.
 * KUBE-LOAD-BALANCER: -LOCAL entries RETURN (source kept), the rest → KUBE-MARK-MASQ.
 * KUBE-NODE-PORT: per protocol, -LOCAL ports RETURN, the others → KUBE-MARK-MASQ.
 * KUBE-POSTROUTING: hairpin (KUBE-LOOP-BACK) MASQUERADE, then the mark: unmarked RETURN, clear the
 *   mark, MASQUERADE [--random-fully]. KUBE-MARK-MASQ: set the mark.
 */
import type { IPFamily, LocalTrafficDetector } from '@kube-proxy/core';
import { localDetectorArgs } from '@kube-proxy/netfilter-iptables';
import type { IpsetView } from './ipset-view.js';
import { KUBE_LOAD_BALANCER, KUBE_MARK_MASQ, KUBE_NODE_PORT, KUBE_POSTROUTING, KUBE_SERVICES } from './owned-chains.js';
import type { RuleLines } from './rule-lines.js';
import { setMatch, writeSetMatchRules } from './set-match-rules.js';

export interface NatContext {
  readonly family: IPFamily;
  readonly sets: IpsetView;
  readonly mark: string;
  readonly masqueradeAll: boolean;
  readonly localDetector: LocalTrafficDetector;
  readonly randomFully: boolean;
}

function writeClusterIPMasquerade(out: RuleLines, ctx: NatContext): void {
  if (ctx.sets.isEmpty('KUBE-CLUSTER-IP')) return;
  const match = ['-A', KUBE_SERVICES, ...setMatch(ctx.sets, 'KUBE-CLUSTER-IP')];
  const detector = localDetectorArgs(ctx.localDetector);
  if (ctx.masqueradeAll) out.rule(match, 'dst,dst', '-j', KUBE_MARK_MASQ);
  else if (detector.implemented) out.rule(match, 'dst,dst', detector.ifNotLocal, '-j', KUBE_MARK_MASQ);
  else out.rule(match, 'src,dst', '-j', KUBE_MARK_MASQ);
}

/** Upstream's externalIPRules: accept off-machine traffic and traffic to local addresses. */
function writeExternalIPAccepts(out: RuleLines, match: readonly string[]): void {
  out.rule(match, '-m', 'physdev', '!', '--physdev-is-in', '-m', 'addrtype', '!', '--src-type', 'LOCAL', '-j', 'ACCEPT');
  out.rule(match, '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'ACCEPT');
}

function writeExternalIPs(out: RuleLines, sets: IpsetView): void {
  if (!sets.isEmpty('KUBE-EXTERNAL-IP')) {
    const match = ['-A', KUBE_SERVICES, ...setMatch(sets, 'KUBE-EXTERNAL-IP'), 'dst,dst'];
    out.rule(match, '-j', KUBE_MARK_MASQ);
    writeExternalIPAccepts(out, match);
  }
  if (!sets.isEmpty('KUBE-EXTERNAL-IP-LOCAL')) {
    writeExternalIPAccepts(out, ['-A', KUBE_SERVICES, ...setMatch(sets, 'KUBE-EXTERNAL-IP-LOCAL'), 'dst,dst']);
  }
}

/** Upstream's acceptIPVSTraffic: last in KUBE-SERVICES, so other rules cannot break IPVS traffic. */
function writeAcceptIPVSTraffic(out: RuleLines, sets: IpsetView): void {
  for (const role of ['KUBE-CLUSTER-IP', 'KUBE-LOAD-BALANCER'] as const) {
    if (!sets.isEmpty(role)) out.rule('-A', KUBE_SERVICES, '-m', 'set', '--match-set', sets.name(role), 'dst,dst', '-j', 'ACCEPT');
  }
}

function writeMasqueradeChains(out: RuleLines, ctx: NatContext): void {
  const markMask = `${ctx.mark}/${ctx.mark}`;
  out.rule('-A', KUBE_POSTROUTING, '-m', 'mark', '!', '--mark', markMask, '-j', 'RETURN');
  out.rule('-A', KUBE_POSTROUTING, '-j', 'MARK', '--xor-mark', ctx.mark);
  out.rule('-A', KUBE_POSTROUTING, '-m', 'comment', '--comment', 'kubernetes service traffic requiring SNAT', '-j', 'MASQUERADE', ctx.randomFully ? ['--random-fully'] : []);
  out.rule('-A', KUBE_MARK_MASQ, '-j', 'MARK', '--or-mark', ctx.mark);
}

/** The nat rules (no header, chain lines or COMMIT), in upstream's order. */
export function writeNatRules(out: RuleLines, ctx: NatContext): void {
  out.rule('-A', KUBE_SERVICES, '-s', ctx.family === 'IPv6' ? '::1/128' : '127.0.0.0/8', '-j', 'RETURN');
  writeSetMatchRules(out, ctx.sets, 'nat');
  writeClusterIPMasquerade(out, ctx);
  writeExternalIPs(out, ctx.sets);
  out.rule('-A', KUBE_SERVICES, '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', KUBE_NODE_PORT);
  out.rule('-A', KUBE_LOAD_BALANCER, '-j', KUBE_MARK_MASQ);
  writeAcceptIPVSTraffic(out, ctx.sets);
  writeMasqueradeChains(out, ctx);
}
