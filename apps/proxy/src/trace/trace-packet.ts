import { canonicalIP, ipFamilyOf, parseHostPort, type TracePacket, type TraceProtocol } from '@kube-proxy/core';

/** Bad input to `trace` / `explain`: one line on stderr, exit 1 (or a 400 from /debug). */
export class TraceInputError extends Error {
  override readonly name = 'TraceInputError';
}

export const TRACE_PROTOCOLS: readonly TraceProtocol[] = ['TCP', 'UDP', 'SCTP'];

export interface PacketInput {
  /** `IP` or `IP:PORT` (`[IPv6]:PORT`). */
  readonly from?: string | undefined;
  /** `IP:PORT` (`[IPv6]:PORT`). */
  readonly to?: string | undefined;
  /** Case-insensitive; TCP when absent. */
  readonly protocol?: string | undefined;
  /** The input interface (PREROUTING only). */
  readonly inInterface?: string | undefined;
}

/** The source: a bare IP (IPv6 unbracketed or bracketed) or IP:PORT. */
function parseSource(text: string): { ip: string; port?: number } | null {
  const bare = canonicalIP(text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text);
  if (bare !== undefined) return { ip: bare };
  return parseHostPort(text);
}

export function parseProtocol(text: string | undefined): TraceProtocol {
  if (text === undefined || text === '') return 'TCP';
  const p = text.toUpperCase() as TraceProtocol;
  if (!TRACE_PROTOCOLS.includes(p)) throw new TraceInputError(`unknown protocol ${JSON.stringify(text)}: want TCP, UDP or SCTP`);
  return p;
}

/**
 * The first packet of the connection to trace. A source that is one of `nodeAddresses` is generated
 * on the node (OUTPUT path); any other arrives from outside or from a pod (PREROUTING), as upstream's
 * packet tracers decide it.
 */
export function buildTracePacket(input: PacketInput, nodeAddresses: readonly string[]): TracePacket {
  if (!input.from) throw new TraceInputError('--from=IP[:PORT] is required (the source address)');
  if (!input.to) throw new TraceInputError('--to=IP:PORT is required (the destination)');
  const source = parseSource(input.from);
  if (!source) throw new TraceInputError(`malformed --from ${JSON.stringify(input.from)}: want IP or IP:PORT ([IPv6]:PORT)`);
  const dest = parseHostPort(input.to);
  if (!dest) throw new TraceInputError(`malformed --to ${JSON.stringify(input.to)}: want IP:PORT ([IPv6]:PORT) with a port in 1-65535`);
  const family = ipFamilyOf(dest.ip);
  if (!family || ipFamilyOf(source.ip) !== family) {
    throw new TraceInputError(`--from ${source.ip} and --to ${dest.ip} are of different IP families`);
  }
  const protocol = parseProtocol(input.protocol);
  const local = new Set(nodeAddresses.map((a) => canonicalIP(a) ?? a));
  const locallyGenerated = local.has(source.ip);
  return {
    family,
    protocol,
    sourceIP: source.ip,
    ...(source.port !== undefined ? { sourcePort: source.port } : {}),
    destIP: dest.ip,
    destPort: dest.port,
    locallyGenerated,
    // The input interface exists only for a packet that arrives (PREROUTING).
    ...(input.inInterface && !locallyGenerated ? { inInterface: input.inInterface } : {}),
  };
}

/** The destination's family, for reading the right rules before the packet is built. */
export function familyOfDestination(to: string | undefined): ReturnType<typeof ipFamilyOf> {
  const dest = to === undefined ? null : parseHostPort(to);
  return dest ? ipFamilyOf(dest.ip) : undefined;
}
