/**
 * One UDP flow of the kernel's conntrack table, reduced to what the stale-flow decision reads: where
 * the client sent it (original destination) and who answers it (reply source, i.e. the DNAT target,
 * or the original destination itself when nothing translated it).
 */
export interface UDPFlow {
  readonly origDst: string;
  readonly origDstPort: number;
  readonly replySrc: string;
  readonly replySrcPort: number;
}

/**
 * Visits the flows of `conntrack -L -p udp` text output, one line at a time, without splitting the
 * whole listing into an array (a busy node lists hundreds of thousands of flows; only the four fields
 * of the current line are kept). Lines that are not a complete UDP flow are skipped.
 *
 * A line reads `udp 17 TTL src=A dst=B sport=P dport=Q [UNREPLIED] src=C dst=D sport=R dport=S …`:
 * the first tuple is the original direction, the second the reply direction.
 */
export function forEachUDPFlow(listing: string, visit: (flow: UDPFlow) => void): number {
  let visited = 0;
  let start = 0;
  while (start < listing.length) {
    let end = listing.indexOf('\n', start);
    if (end < 0) end = listing.length;
    const flow = parseFlowLine(listing, start, end);
    if (flow !== undefined) {
      visit(flow);
      visited++;
    }
    start = end + 1;
  }
  return visited;
}

/** The flow on `text[start, end)`, or undefined when the line is not a UDP flow with both tuples. */
export function parseFlowLine(text: string, start: number, end: number): UDPFlow | undefined {
  if (!text.startsWith('udp ', start)) return undefined;
  const origDst = field(text, 'dst=', start, end);
  if (origDst === undefined) return undefined;
  const origDstPort = field(text, 'dport=', origDst.next, end);
  if (origDstPort === undefined) return undefined;
  const replySrc = field(text, 'src=', origDstPort.next, end);
  if (replySrc === undefined) return undefined;
  const replySrcPort = field(text, 'sport=', replySrc.next, end);
  if (replySrcPort === undefined) return undefined;
  const dport = Number(origDstPort.value);
  const sport = Number(replySrcPort.value);
  if (!Number.isInteger(dport) || !Number.isInteger(sport)) return undefined;
  return { origDst: origDst.value, origDstPort: dport, replySrc: replySrc.value, replySrcPort: sport };
}

/** The value of the first ` name=value` on the line at or after `from`, and where scanning may go on. */
function field(text: string, name: string, from: number, end: number): { value: string; next: number } | undefined {
  const key = ` ${name}`;
  const at = text.indexOf(key, from);
  if (at < 0 || at >= end) return undefined;
  const valueStart = at + key.length;
  let valueEnd = text.indexOf(' ', valueStart);
  if (valueEnd < 0 || valueEnd > end) valueEnd = end;
  if (valueEnd === valueStart) return undefined;
  return { value: text.slice(valueStart, valueEnd), next: valueEnd };
}
