/* A packet-flow tracer over the in-memory kube-proxy table, for tests that ask "where does this
 * packet go?" rather than "which lines were written?" (upstream's nftablesTracer / runPacketFlowTests,
 * rebuilt for the layout after kubernetes PR #132456). It follows a new connection's first packet:
 *
 *   filter-prerouting-pre-dnat (-110) → nat-prerouting (-100) → DNAT → filter-forward or filter-input (0)
 *
 * choosing forward or input by where the packet is headed after DNAT (input when that is one of the
 * node's IPs), as the kernel routes it; upstream's tracer runs forward and then input whatever the
 * destination, which gives the same answers for every table our renderer writes. The output chains
 * and nat-postrouting are not traced: the first mirror the prerouting ones, and masquerading is
 * reported from the inline `mark set mark or MARK` that requests it, or from the hairpin-connections
 * element the DNATed packet (source = destination) matches (upstream v1.36+ layout).
 *
 * `numgen random` visits every endpoint, so the output lists all reachable endpoints.
 *
 * runPacketFlows, which every ported upstream flow spec uses, runs the production tracer (src/trace)
 * instead; tracePacket stays as the hand-checkable reference its own spec pins down. */
import { canonicalIP, type PacketTrace, type TraceProtocol } from '@kube-proxy/core';
import { traceRuleset } from '../trace/packet-trace.js';
import { rulesetOfMemoryTable } from '../trace/script-parser.js';
import { TEST_NODE_NAME } from './fake-proxier.js';
import type { MemoryNftTable } from '../nft/memory-table.js';
import { CHAIN, SET } from '../render/table-names.js';
import { COMMENT_RE, DNAT_MAP_ENTRY_RE, DNAT_MAP_RE, DNAT_RE, JUMP_RE, MARK_RE, MATCHERS, NUMGEN_ENTRY_RE, NUMGEN_RE, RETURN_RE, VERDICT_RE, type MatchEnv, type TracedPacket } from './rule-matchers.js';

export type { TracedPacket } from './rule-matchers.js';

export interface TraceResult {
  /** "REJECT", "DROP", the DNAT destinations ("10.0.0.1:80, 10.0.0.2:80"), or "" when nothing applies. */
  readonly output: string;
  readonly masq: boolean;
  /** Every rule that took effect, `chain: rule`, for failure messages. */
  readonly matches: readonly string[];
}

/** Deep enough for any chain graph we write (base → dispatch → service → endpoint); a loop is a bug. */
const MAX_DEPTH = 16;

function valueOfBody(body: string): string | undefined {
  const colon = body.lastIndexOf(' : ');
  return colon < 0 ? undefined : body.slice(colon + 3);
}

/** The host of `ip:port` / `[ip6]:port`. */
export function hostOf(hostPort: string): string {
  if (hostPort.startsWith('[')) return hostPort.slice(1, hostPort.indexOf(']'));
  return hostPort.slice(0, hostPort.lastIndexOf(':'));
}

class Tracer {
  readonly outputs: string[] = [];
  readonly matches: string[] = [];
  masq = false;

  constructor(
    private readonly table: MemoryNftTable,
    private readonly nodeIPs: ReadonlySet<string>,
  ) {}

  private env(packet: TracedPacket): MatchEnv {
    const table = this.table;
    const elementsOf = (name: string) => {
      const elements = table.elementsOf(name);
      if (!elements) throw new Error(`rule names a set or map that does not exist: @${name}`);
      return elements;
    };
    return {
      packet,
      nodeIPs: this.nodeIPs,
      keysOf: (name) => [...elementsOf(name).keys()],
      valueOf: (name, key) => {
        const body = elementsOf(name).get(key);
        return body === undefined ? undefined : valueOfBody(body);
      },
    };
  }

  /** Runs `chain`; true when the packet met a terminal verdict (accept is never written by us). */
  runChain(chain: string, packet: TracedPacket, depth = 0): boolean {
    if (depth > MAX_DEPTH) throw new Error(`chain nesting deeper than ${MAX_DEPTH} at ${chain}`);
    const rules = this.table.rulesOf(chain);
    if (!rules) throw new Error(`unknown chain ${chain}`);
    const env = this.env(packet);
    for (const rule of rules) {
      const outcome = this.runRule(chain, rule, packet, env, depth);
      if (outcome !== 'next') return outcome === 'terminal';
    }
    return false;
  }

  /** 'next': on to the next rule; 'return': back to the caller; 'terminal': the packet's fate is decided. */
  private runRule(chain: string, rule: string, packet: TracedPacket, env: MatchEnv, depth: number): 'next' | 'return' | 'terminal' {
    let rest = rule.replace(COMMENT_RE, '').trim();
    const took = () => this.matches.push(`${chain}: ${rule}`);
    while (rest !== '') {
      const piece = MATCHERS.find((m) => m.re.test(rest));
      if (piece) {
        const m = rest.match(piece.re)!;
        const result = piece.test(m, env);
        if (result.kind === 'nomatch') return 'next';
        rest = result.kind === 'verdict' ? result.text : rest.slice(m[0].length).trim();
        continue;
      }
      let m: RegExpMatchArray | null;
      if ((m = rest.match(MARK_RE))) {
        // The mark is what the masquerading chain acts on; setting it stands for the masquerade.
        took();
        this.masq = true;
        return 'next';
      }
      if ((m = rest.match(JUMP_RE))) {
        took();
        if (this.runChain(m[2], packet, depth + 1)) return 'terminal';
        return m[1] === 'goto' ? 'return' : 'next';
      }
      if ((m = rest.match(VERDICT_RE))) {
        took();
        this.outputs.push(m[1].toUpperCase());
        return 'terminal';
      }
      if (RETURN_RE.test(rest)) {
        took();
        return 'return';
      }
      if ((m = rest.match(DNAT_RE))) {
        if (m[1] !== packet.protocol) return 'next';
        took();
        this.outputs.push(m[2]);
        return 'terminal';
      }
      if ((m = rest.match(DNAT_MAP_RE))) {
        if (m[1] !== packet.protocol) return 'next';
        took();
        const entries = m[4].split(' , ').map((e) => e.match(DNAT_MAP_ENTRY_RE));
        if (entries.some((e) => e === null) || entries.length !== Number(m[3])) throw new Error(`malformed endpoint map: ${rule}`);
        entries.forEach((e, i) => {
          if (Number(e![1]) !== i) throw new Error(`endpoint map index ${e![1]} out of order: ${rule}`);
          this.outputs.push(m![2] === 'ip6' ? `[${e![2]}]:${e![3]}` : `${e![2]}:${e![3]}`);
        });
        return 'terminal';
      }
      if ((m = rest.match(NUMGEN_RE))) {
        took();
        const entries = m[2].split(' , ').map((e) => e.match(NUMGEN_ENTRY_RE));
        if (entries.some((e) => e === null) || entries.length !== Number(m[1])) throw new Error(`malformed endpoint vmap: ${rule}`);
        entries.forEach((e, i) => {
          if (Number(e![1]) !== i) throw new Error(`endpoint vmap index ${e![1]} out of order: ${rule}`);
          this.runChain(e![2], packet, depth + 1);
        });
        return 'terminal';
      }
      throw new Error(`the tracer does not understand "${rest}" in chain ${chain}: ${rule}`);
    }
    // A rule of matches and side effects only (an affinity update) goes on to the next rule.
    took();
    return 'next';
  }
}

/** Whether the DNATed packet is one of hairpin-connections' (a pod reaching itself through a service). */
function hairpins(table: MemoryNftTable, packet: TracedPacket, outputs: readonly string[]): boolean {
  const set = table.elementsOf(SET.hairpinConnections);
  if (!set) return false;
  const source = canonicalIP(packet.sourceIP) ?? packet.sourceIP;
  for (const out of outputs) {
    const host = canonicalIP(hostOf(out)) ?? hostOf(out);
    const port = out.slice(out.lastIndexOf(':') + 1);
    if (host !== source) continue;
    for (const key of set.keys()) {
      const [a, b, proto, p] = key.split(' . ');
      if ((canonicalIP(a) ?? a) === host && (canonicalIP(b) ?? b) === host && proto === packet.protocol && p === port) return true;
    }
  }
  return false;
}

/** Where the first packet of a new connection goes, and whether it is masqueraded. */
export function tracePacket(table: MemoryNftTable, packet: TracedPacket, nodeIPs: readonly string[]): TraceResult {
  const local = new Set(nodeIPs.map((ip) => canonicalIP(ip) ?? ip));
  const tracer = new Tracer(table, local);
  const result = () => ({ output: tracer.outputs.join(', '), masq: tracer.masq, matches: tracer.matches });
  if (tracer.runChain(CHAIN.filterPreroutingPreDNAT, packet)) return result();
  tracer.runChain(CHAIN.natPrerouting, packet);
  if (hairpins(table, packet, tracer.outputs)) tracer.masq = true;
  const destIP = tracer.outputs.length > 0 ? hostOf(tracer.outputs[0]) : packet.destIP;
  const after = { ...packet, destIP };
  tracer.runChain(local.has(canonicalIP(destIP) ?? destIP) ? CHAIN.filterInput : CHAIN.filterForward, after);
  return result();
}

/** One case of upstream's packetFlowTest (protocol defaults to tcp; masq to false). */
export interface PacketFlowCase {
  readonly name: string;
  readonly sourceIP: string;
  readonly protocol?: 'tcp' | 'udp' | 'sctp';
  readonly destIP: string;
  readonly destPort: number;
  readonly output: string;
  readonly masq?: boolean;
}

export interface PacketFlowOutcome {
  readonly name: string;
  readonly output: string;
  readonly masq: boolean;
}

/** Upstream's `output`: the endpoints in rule order ("a:80, b:80"), "REJECT", "DROP", or "" (nothing applies). */
function upstreamOutput(trace: PacketTrace): string {
  if (trace.verdict === 'DNAT') return trace.choices.map((c) => c.endpoint).join(', ');
  return trace.verdict === 'ACCEPT' ? '' : trace.verdict;
}

/**
 * Traces every case through the production tracer (src/trace) and returns each case's observed
 * outcome beside its expected one, so a spec can `expect(got).toEqual(want)` and see every failing
 * flow in one diff. A source that is one of the node's IPs takes the OUTPUT path, as in the kernel.
 */
export function runPacketFlows(table: MemoryNftTable, nodeIPs: readonly string[], cases: readonly PacketFlowCase[]): { got: PacketFlowOutcome[]; want: PacketFlowOutcome[] } {
  const ruleset = rulesetOfMemoryTable(table);
  const node = { name: TEST_NODE_NAME, addresses: nodeIPs.map((ip) => canonicalIP(ip) ?? ip) };
  const got: PacketFlowOutcome[] = [];
  const want: PacketFlowOutcome[] = [];
  for (const c of cases) {
    const family = c.destIP.includes(':') ? 'IPv6' : 'IPv4';
    const source = canonicalIP(c.sourceIP) ?? c.sourceIP;
    const packet = { family, protocol: (c.protocol ?? 'tcp').toUpperCase() as TraceProtocol, sourceIP: c.sourceIP, destIP: c.destIP, destPort: c.destPort, locallyGenerated: node.addresses.includes(source) } as const;
    const r = traceRuleset(ruleset, packet, node);
    const unknown = r.path.filter((step) => step.note?.startsWith('not understood'));
    if (unknown.length > 0) throw new Error(`${c.name}: the tracer did not understand ${unknown.map((step) => `"${step.rule}"`).join(', ')}`);
    got.push({ name: c.name, output: upstreamOutput(r), masq: r.masquerade });
    want.push({ name: c.name, output: c.output, masq: c.masq ?? false });
  }
  return { got, want };
}
