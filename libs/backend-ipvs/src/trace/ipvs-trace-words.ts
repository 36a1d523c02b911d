/**
 * How an IPVS trace reads: the iptables engine's steps with the ipset entries that made their set
 * matches hold, the reason a packet is masqueraded (from the rule that set the mark) and the reason
 * a filter rule refused it, in core's shared trace words.
 */
import type { TracePacket, TraceStep } from '@kube-proxy/core';
import { traceWords } from '@kube-proxy/core';
import { servicePortOfComment, type IptablesRuleRef, type IptablesTrace } from '@kube-proxy/netfilter-iptables';
import type { IpsetEntry } from './ipset-index.js';

/** The Service port an entry's comment names (`ns/name:port`), if any entry has one. */
export function serviceOfEntries(entries: readonly IpsetEntry[]): string | null {
  for (const e of entries) {
    const named = servicePortOfComment(e.comment);
    if (named !== undefined) return named;
  }
  return null;
}

/** The engine's steps as trace steps, each set-matching rule preceded by the ipset entry that held. */
export function iptablesSteps(it: IptablesTrace, matched: readonly IpsetEntry[], service: string | null): TraceStep[] {
  const steps: TraceStep[] = [];
  const shown = new Set<IpsetEntry>();
  for (const s of it.steps) {
    // KUBE-IPVS-OUT-FILTER's -m ipvs rules are evaluated by the IPVS tracer itself.
    if (s.action === 'not-understood' && s.rule.includes(' -m ipvs ')) continue;
    for (const e of matched) {
      if (shown.has(e) || !new RegExp(`--match-set ${e.set.replace(/[-]/g, '\\-')} `).test(s.rule)) continue;
      shown.add(e);
      steps.push({ where: `ipset ${e.set}`, rule: `add ${e.set} ${e.text}`, ...(e.comment !== undefined ? { service: servicePortOfComment(e.comment) ?? e.comment } : {}) });
    }
    const note = s.note ?? (s.action === 'masquerade-mark' ? 'marked for masquerade' : undefined);
    steps.push({ where: `${s.table}/${s.chain}`, rule: s.rule, ...(service !== null && s.action === 'accept' ? { service } : {}), ...(note !== undefined ? { note } : {}) });
  }
  return steps;
}

/** Why the rule that set the masquerade mark did (IPVS mode's KUBE-SERVICES / KUBE-LOAD-BALANCER / KUBE-NODE-PORT rules). */
export function masqueradeReasonOf(ref: IptablesRuleRef | undefined): string {
  if (ref === undefined) return traceWords.notMasqueraded;
  const rule = ref.rule;
  if (ref.chain === 'KUBE-LOAD-BALANCER' || ref.chain === 'KUBE-NODE-PORT' || /KUBE-(6-)?EXTERNAL-IP /.test(rule)) return traceWords.masqueradeExternal;
  if (/KUBE-(6-)?CLUSTER-IP src,dst/.test(rule)) return traceWords.masqueradeFromServiceAddress;
  if (/KUBE-(6-)?CLUSTER-IP dst,dst/.test(rule)) return / ! -[si] |physdev/.test(rule) ? traceWords.masqueradeOffCluster : traceWords.masqueradeAll;
  return `marked for masquerade by ${ref.table}/${ref.chain}: ${rule}`;
}

/** The reason of a REJECT/DROP by a filter rule of IPVS mode (or anyone's). */
export function refusalReason(ctx: { readonly packet: TracePacket; readonly service: string | null; readonly label: string }, ref: IptablesRuleRef | undefined): string {
  const { packet } = ctx;
  const subject = ctx.service ?? ctx.label.replace(/^the Service at /, '');
  if (ref === undefined) return 'the packet is refused';
  if (ref.chain === 'KUBE-SOURCE-RANGES-FIREWALL' || ref.chain === 'KUBE-PROXY-FIREWALL') return traceWords.outsideSourceRanges(packet.sourceIP, subject);
  if (ref.chain === 'KUBE-IPVS-FILTER') return traceWords.serviceAddressWrongPort(packet.destIP, packet.destPort, packet.protocol);
  return `${ref.table}/${ref.chain} refuses the packet: ${ref.rule}`;
}
