import type { PacketTrace, TraceEndpointChoice, TraceNode, TracePacket, TraceStep } from '@kube-proxy/core';
import { formatHostPort, sortedEndpoints } from '@kube-proxy/core';
import type { IptablesTrace, IptablesTraceStep, SavedTables } from '@kube-proxy/netfilter-iptables';
import { servicePortOfComment } from '@kube-proxy/netfilter-iptables';
import { acceptReason, dnatReason, masqueradeReason, refusalReason } from './trace-reasons.js';

/** An iptables trace as the mode-independent PacketTrace (`kube-proxy trace -o json`). */
export function packetTraceOf(trace: IptablesTrace, tables: SavedTables, packet: TracePacket, node: TraceNode): PacketTrace {
  const service = serviceOf(trace);
  const choices = choicesOf(trace);
  const endpoints = trace.verdict === 'DNAT' ? sortedEndpoints(choices.map((c) => c.endpoint)) : [];
  const masqReason = masqueradeReason(trace);
  return {
    verdict: trace.verdict,
    endpoints,
    choices: trace.verdict === 'DNAT' ? choices : [],
    masquerade: trace.masquerade,
    masqueradeReason: masqReason,
    service,
    path: trace.steps.map((step) => traceStepOf(step, trace, masqReason)),
    reason: reasonOf(trace, service, endpoints.length, tables, packet, node),
  };
}

function reasonOf(trace: IptablesTrace, service: string | null, endpointCount: number, tables: SavedTables, packet: TracePacket, node: TraceNode): string {
  switch (trace.verdict) {
    case 'DNAT':
      return dnatReason(service, endpointCount, trace);
    case 'REJECT':
    case 'DROP':
      return refusalReason(trace, service, packet, node);
    case 'ACCEPT':
      return acceptReason(trace, tables, packet);
  }
}

/** The Service port of the rule that decided, else the first rule on the path that names one. */
function serviceOf(trace: IptablesTrace): string | null {
  const decided = servicePortOfComment(trace.decidedBy?.comment);
  if (decided !== undefined && trace.verdict !== 'DNAT') return decided;
  for (const step of trace.steps) {
    const servicePort = servicePortOfComment(step.comment);
    if (servicePort !== undefined) return servicePort;
  }
  return decided ?? null;
}

/** DNAT choices in rule order (the same destination twice, e.g. under affinity, counts once). */
function choicesOf(trace: IptablesTrace): TraceEndpointChoice[] {
  const byEndpoint = new Map<string, number>();
  for (const d of trace.dnat) byEndpoint.set(d.destination, (byEndpoint.get(d.destination) ?? 0) + d.probability);
  if (trace.redirect && byEndpoint.size === 0) {
    byEndpoint.set(formatHostPort(trace.filterDestination.ip, trace.redirect.port), 1);
  }
  return [...byEndpoint].map(([endpoint, probability]) => ({ endpoint, probability }));
}

function percent(p: number): string {
  return `${Math.round(p * 1000) / 10}%`;
}

function traceStepOf(step: IptablesTraceStep, trace: IptablesTrace, masqReason: string): TraceStep {
  const service = servicePortOfComment(step.comment);
  let note = noteOf(step, trace, masqReason);
  if (step.probability < 1 && step.action !== 'not-understood') note += ` (${percent(step.probability)} of new connections)`;
  return { where: `${step.table}/${step.chain}`, rule: step.rule, ...(service !== undefined ? { service } : {}), note };
}

function noteOf(step: IptablesTraceStep, trace: IptablesTrace, masqReason: string): string {
  switch (step.action) {
    case 'jump':
      return `jump to ${step.target}`;
    case 'goto':
      return `go to ${step.target}`;
    case 'return':
      return 'return to the calling chain';
    case 'masquerade-mark':
      return trace.masqueradeRule?.rule === step.rule && trace.masqueradeRule.chain === step.chain ? `marked for masquerade: ${masqReason}` : 'sets the masquerade mark';
    case 'drop-mark':
      return 'marked to be dropped';
    case 'mark':
      return 'sets the packet mark';
    case 'accept':
      return 'accepted';
    case 'drop':
      return 'dropped';
    case 'reject':
      return 'rejected';
    default:
      return step.note ?? step.action;
  }
}
