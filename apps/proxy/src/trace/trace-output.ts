import { formatHostPort, type IPFamily, type PacketTrace, type TracePacket } from '@kube-proxy/core';

/** Where the rules a trace ran over came from. */
export interface TraceOrigin {
  readonly mode: string;
  readonly family: IPFamily;
  /** The snapshot's source in words (`iptables-legacy-save`, `--dry-run output`, …). */
  readonly source: string;
}

/** `-o json` (and /debug/trace): the PacketTrace as it is, with where its rules came from. */
export function traceJson(trace: PacketTrace, origin: TraceOrigin): PacketTrace & TraceOrigin {
  return { ...trace, mode: origin.mode, family: origin.family, source: origin.source };
}

function percent(p: number): string {
  const v = Math.round(p * 1000) / 10;
  return `${v}%`;
}

function packetLine(packet: TracePacket): string {
  const from = packet.sourcePort === undefined ? packet.sourceIP : formatHostPort(packet.sourceIP, packet.sourcePort);
  const to = formatHostPort(packet.destIP, packet.destPort);
  const how = packet.locallyGenerated
    ? 'sent by the node itself (OUTPUT)'
    : `arriving from outside the node or from a pod (PREROUTING${packet.inInterface ? `, in on ${packet.inInterface}` : ''})`;
  return `Packet:     ${packet.protocol} ${from} -> ${to}, ${how}`;
}

function verdictLines(trace: PacketTrace): string[] {
  switch (trace.verdict) {
    case 'DNAT': {
      const lines = [`Verdict:    DNAT to ${trace.endpoints.length === 1 ? 'its only endpoint' : `one of ${trace.endpoints.length} endpoints`}`];
      const choices = trace.choices.length > 0 ? trace.choices : trace.endpoints.map((endpoint) => ({ endpoint, probability: 1 / trace.endpoints.length }));
      const width = Math.max(...choices.map((c) => c.endpoint.length));
      for (const c of choices) lines.push(`  ${c.endpoint.padEnd(width)}  ${percent(c.probability)}`);
      return lines;
    }
    case 'REJECT':
      return ['Verdict:    REJECT (the client is refused at once)'];
    case 'DROP':
      return ['Verdict:    DROP (the client sees a timeout)'];
    case 'ACCEPT':
      return ['Verdict:    ACCEPT (no Service rule applies; the packet passes unchanged)'];
  }
}

/** The text output: the path step by step as an operator reads it, then the verdict and why. */
export function formatTraceText(trace: PacketTrace, packet: TracePacket, origin: TraceOrigin): string {
  const lines = [packetLine(packet), `Rules:      ${origin.mode} mode, ${origin.family}, from ${origin.source}`];
  lines.push(`Service:    ${trace.service ?? '(none)'}`, '', 'Path:');
  if (trace.path.length === 0) lines.push('  (no rule took effect)');
  trace.path.forEach((step, i) => {
    const n = `${i + 1}.`.padEnd(4);
    lines.push(`  ${n}${step.where}`, `      ${step.rule}`);
    if (step.service) lines.push(`      service port: ${step.service}`);
    if (step.note) lines.push(`      -> ${step.note}`);
  });
  lines.push('', ...verdictLines(trace));
  lines.push(`Masquerade: ${trace.masquerade ? 'yes' : 'no'}: ${trace.masqueradeReason}`);
  lines.push(`Reason:     ${trace.reason}`);
  return lines.join('\n') + '\n';
}
