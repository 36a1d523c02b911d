import type { TraceNode, TracePacket } from '@kube-proxy/core';
import { traceWords } from '@kube-proxy/core';
import type { IptablesRuleRef, IptablesTrace, SavedTables } from '@kube-proxy/netfilter-iptables';
import { parseSavedRule, savedChain, servicePortOfComment } from '@kube-proxy/netfilter-iptables';

/*
 * The sentences of an iptables trace, in Kubernetes terms, read from the comments kube-proxy
 * (upstream's and ours) writes on the rule that decided: "ns/svc:p has no endpoints", "… has no local
 * endpoints", "… traffic not accepted by KUBE-FW-…", "masquerade traffic for … external destinations" …
 */

function where(ref: IptablesRuleRef): string {
  return `${ref.table}/${ref.chain}`;
}

/** Why a REJECT or DROP happened. */
export function refusalReason(trace: IptablesTrace, service: string | null, packet: TracePacket, node: TraceNode): string {
  const ref = trace.decidedBy;
  const comment = ref?.comment ?? '';
  const servicePort = servicePortOfComment(comment) ?? service;
  if (servicePort !== null && ref !== undefined) {
    if (comment.includes('has no local endpoints')) {
      // Upstream writes the internal policy's rule in KUBE-SERVICES (cluster IPs), the external one elsewhere.
      return ref.chain === 'KUBE-SERVICES' ? traceWords.noLocalEndpointsInternal(servicePort, node.name) : traceWords.noLocalEndpoints(servicePort, node.name);
    }
    if (comment.includes('has no endpoints')) return traceWords.noEndpoints(servicePort);
    if (/not accepted by|will be dropped|loadbalancer IP/.test(comment)) return traceWords.outsideSourceRanges(packet.sourceIP, servicePort);
  }
  const verb = trace.verdict === 'DROP' ? 'dropped' : 'rejected';
  return ref ? `${verb} by ${where(ref)}${comment ? ` ("${comment}")` : ''}` : verb;
}

/** Why nothing was changed: a health check accept, a cluster IP on another port, or no Service rule. */
export function acceptReason(trace: IptablesTrace, tables: SavedTables, packet: TracePacket): string {
  const accepted = trace.steps.find((s) => s.table === 'filter' && s.action === 'accept' && servicePortOfComment(s.comment) !== undefined);
  if (accepted) return `accepted by ${accepted.table}/${accepted.chain}: "${accepted.comment}"`;
  if (isClusterIPOfAService(tables, packet.destIP)) return traceWords.invalidClusterIPPort(packet.destIP, packet.destPort, packet.protocol);
  return traceWords.noServiceRule(packet.destIP, packet.destPort, packet.protocol);
}

/** A nat KUBE-SERVICES rule sends this address (on some port) to a Service as its cluster IP. */
function isClusterIPOfAService(tables: SavedTables, ip: string): boolean {
  for (const rule of savedChain(tables, 'nat', 'KUBE-SERVICES')?.rules ?? []) {
    if (!rule.comment?.endsWith('cluster IP')) continue;
    if (rule.matches.some((m) => m.kind === 'destination' && !m.negated && m.text === ip)) return true;
    if (rule.matches.some((m) => m.kind === 'destination' && !m.negated && m.cidr !== undefined && m.cidr.text === `${ip}/${ip.includes(':') ? 128 : 32}`)) return true;
  }
  return false;
}

/** Why the packet is (not) masqueraded, from the rule that set the mark. */
export function masqueradeReason(trace: IptablesTrace): string {
  if (!trace.masquerade) return traceWords.notMasqueraded;
  const ref = trace.masqueradeRule;
  if (ref === undefined) return 'the packet carries the masquerade mark';
  const comment = ref.comment ?? '';
  if (comment.startsWith('masquerade LOCAL traffic')) return traceWords.masqueradeLocalSource;
  if (/^masquerade traffic for .* external destinations/.test(comment)) return traceWords.masqueradeExternal;
  if (ref.chain.startsWith('KUBE-SEP-')) return traceWords.masqueradeHairpin;
  if (comment.endsWith('cluster IP')) {
    // Upstream's cluster IP rule masquerades "not from a pod" (! -s podCIDR, ! -i pods' interface …),
    // or everything under masqueradeAll.
    const rule = parseSavedRule(ref.table, ref.rule);
    const conditional = rule?.matches.some((m) => (m.kind === 'source' || m.kind === 'in-interface' || m.kind === 'physdev') && m.negated);
    return conditional ? traceWords.masqueradeOffCluster : traceWords.masqueradeAll;
  }
  return `marked for masquerade by ${where(ref)}${comment ? ` ("${comment}")` : ''}`;
}

/** Why the packet went where it went (verdict DNAT). */
export function dnatReason(service: string | null, endpointCount: number, trace: IptablesTrace): string {
  if (service !== null) return traceWords.sentTo(service, endpointCount);
  const ref = trace.decidedBy;
  return `sent to ${endpointCount === 1 ? 'one endpoint' : `one of ${endpointCount} endpoints`}${ref ? ` by ${where(ref)}` : ''}`;
}
