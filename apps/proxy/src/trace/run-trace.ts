import type { ModeTracer, PacketTrace, RuleSnapshot, TraceNode, TracePacket } from '@kube-proxy/core';
import { buildTracePacket, type PacketInput } from './trace-packet.js';
import type { TraceOrigin } from './trace-output.js';

/** One trace: the packet built from the request, the tracer's answer, and where the rules came from. */
export interface TraceAnswer {
  readonly packet: TracePacket;
  readonly trace: PacketTrace;
  readonly origin: TraceOrigin;
}

/** Traces `request` over `snapshot` on `node` (the CLI and /debug/trace share it). */
export function traceOver(mode: string, tracer: ModeTracer, snapshot: RuleSnapshot, request: PacketInput, node: TraceNode): TraceAnswer {
  const packet = buildTracePacket(request, node.addresses);
  const trace = tracer.trace(snapshot, packet, node);
  return { packet, trace, origin: { mode, family: packet.family, source: snapshot.source } };
}
