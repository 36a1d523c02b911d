/*
 * From the walked branches to the answer in the contract's terms: the verdict, every endpoint with
 * its probability, masquerade and why, the Service port, the path and one sentence of reason.
 */
import { canonicalIP, sortedEndpoints, traceWords, type PacketTrace, type TraceEndpointChoice, type TraceNode, type TracePacket, type TraceVerdict } from '@kube-proxy/core';
import type { Branch, RuleRef } from './chain-walker.js';
import type { EvalEnv, FlowState } from './flow-state.js';
import { walkHooks, type WalkedBranch } from './hook-path.js';
import type { NftRuleset } from './nft-ruleset.js';
import { chainOwner, commentOwner } from './service-names.js';

function verdictOf(b: Branch): TraceVerdict {
  if (b.verdict === 'drop') return 'DROP';
  if (b.verdict === 'reject') return 'REJECT';
  return b.endpoint !== undefined ? 'DNAT' : 'ACCEPT';
}

/** DNAT if any branch reaches an endpoint; else REJECT, DROP, ACCEPT in that order. */
function overallVerdict(branches: readonly WalkedBranch[]): TraceVerdict {
  const verdicts = new Set(branches.map((w) => verdictOf(w.branch)));
  for (const v of ['DNAT', 'REJECT', 'DROP'] as const) if (verdicts.has(v)) return v;
  return 'ACCEPT';
}

function choicesOf(branches: readonly WalkedBranch[]): TraceEndpointChoice[] {
  const byEndpoint = new Map<string, number>();
  for (const { branch } of branches) byEndpoint.set(branch.endpoint!, (byEndpoint.get(branch.endpoint!) ?? 0) + branch.probability);
  return [...byEndpoint].map(([endpoint, p]) => ({ endpoint, probability: Math.round(p * 1e6) / 1e6 }));
}

/**
 * Masqueraded: postrouting ran `masquerade` for it, or (on the input path, or when the packet is
 * dropped, where no postrouting runs) the rules marked it — upstream's tracers report the mark.
 */
function isMasqueraded(w: WalkedBranch): boolean {
  return w.branch.masqueraded || (!w.postrouted && w.branch.state.mark !== 0);
}

function masqueradeReason(cause: RuleRef | undefined): string {
  if (cause === undefined) return traceWords.masqueradeExternal;
  const { chain, rule } = cause;
  if (rule.includes('hairpin') || (chain.startsWith('endpoint-') && /\bsaddr\b/.test(rule))) return traceWords.masqueradeHairpin;
  if (/fib saddr type local/.test(rule)) return traceWords.masqueradeLocalSource;
  if (/saddr != /.test(rule)) return traceWords.masqueradeOffCluster;
  if (chain.startsWith('external-')) return traceWords.masqueradeExternal;
  if (chain.startsWith('service-') || /\bdaddr\b/.test(rule)) return traceWords.masqueradeAll;
  return traceWords.masqueradeExternal;
}

function serviceOf(b: Branch): string | null {
  return b.owners[0] ?? null;
}

function dropReason(b: Branch, packet: TracePacket, node: TraceNode, service: string | null): string {
  const { chain, rule } = b.decidedBy!;
  const hitOwner = commentOwner(b.lastHit?.element.comment) ?? service;
  if (b.lastHit && /no-endpoint/.test(b.lastHit.container) && hitOwner !== null) {
    return b.verdict === 'drop' ? traceWords.noLocalEndpoints(hitOwner, node.name) : traceWords.noEndpoints(hitOwner);
  }
  const fw = chainOwner(chain);
  if (fw?.kind === 'firewall' || (b.lastHit && /firewall/.test(b.lastHit.container))) {
    return traceWords.outsideSourceRanges(packet.sourceIP, fw?.servicePort ?? hitOwner ?? '?');
  }
  if (/@cluster-ips\b/.test(rule)) return traceWords.invalidClusterIPPort(packet.destIP, packet.destPort, packet.protocol);
  if (chain === 'cluster-ips-check' || /unallocated/i.test(rule)) return traceWords.unallocatedClusterIP(packet.destIP);
  return `${b.verdict === 'drop' ? 'dropped' : 'rejected'} by a rule of ${chain}: ${rule}`;
}

function startState(packet: TracePacket): FlowState {
  return {
    saddr: canonicalIP(packet.sourceIP) ?? packet.sourceIP,
    daddr: canonicalIP(packet.destIP) ?? packet.destIP,
    proto: packet.protocol.toLowerCase(),
    ...(packet.sourcePort !== undefined ? { sport: packet.sourcePort } : {}),
    dport: packet.destPort,
    mark: 0,
    ...(packet.inInterface !== undefined ? { iif: packet.inInterface } : {}),
    dnatted: false,
  };
}

export function traceRuleset(ruleset: NftRuleset, packet: TracePacket, node: TraceNode): PacketTrace {
  const env: EvalEnv = { ruleset, nodeIPs: new Set(node.addresses.map((a) => canonicalIP(a) ?? a)) };
  const start: Branch = { state: startState(packet), probability: 1, steps: [], masqueraded: false, owners: [] };
  const walked = walkHooks(env, start, packet.locallyGenerated);
  const verdict = overallVerdict(walked);
  const chosen = walked.filter((w) => verdictOf(w.branch) === verdict);
  const first = chosen[0]!.branch;
  const masqueraded = chosen.filter(isMasqueraded);
  const masquerade = masqueraded.length > 0;
  const service = serviceOf(first);
  const choices = verdict === 'DNAT' ? choicesOf(chosen) : [];
  let reason: string;
  if (verdict === 'DNAT') reason = traceWords.sentTo(service ?? `${packet.destIP}:${packet.destPort}`, choices.length);
  else if (verdict === 'ACCEPT') reason = traceWords.noServiceRule(packet.destIP, packet.destPort, packet.protocol);
  else reason = dropReason(first, packet, node, service);
  return {
    verdict,
    endpoints: sortedEndpoints(choices.map((c) => c.endpoint)),
    choices,
    masquerade,
    masqueradeReason: masquerade ? masqueradeReason(masqueraded[0]!.branch.masqueradeCause) : traceWords.notMasqueraded,
    service: verdict === 'ACCEPT' ? null : service,
    path: first.steps,
    reason,
  };
}
