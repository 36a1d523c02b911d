/**
 * "trace --live says X; real packets do X": one check per packet shape. The trace is taken first
 * (from the node's namespace, as an operator would), compared with what the Service shape calls for,
 * and then real TCP/UDP connections from the same source confirm it:
 * - DNAT: every endpoint that answers is in the trace's endpoint set, and (without ClientIP affinity)
 *   enough connections reach every endpoint of the set; with affinity every connection reaches one;
 *   the source the endpoint sees is one of the node's addresses when the trace says masquerade, the
 *   client's own address otherwise;
 * - REJECT: every connection is refused; DROP: every connection times out (short, bounded tries).
 * Every step of the trace's path must be a rule (or map element) the kernel tool prints.
 */
import type { PacketTrace, TraceProtocol, TraceVerdict } from '@kube-proxy/core';
import { describeProbe, probe, type ProbeResult, type SimulatedNode } from '@kube-proxy/testing-netns';
import { traceLive } from './trace-cli.js';

export interface TraceCase {
  readonly name: string;
  /** Namespace the real connections come from (the trace itself always runs in the node's). */
  readonly fromNs: string;
  /** The source address: `--from`, and the address the connections are bound to. */
  readonly from: string;
  readonly host: string;
  readonly port: number;
  readonly protocol?: TraceProtocol;
  /** What the Service shape calls for; fields left out are not asserted (the traffic still is). */
  readonly want: {
    readonly verdict: TraceVerdict;
    readonly endpoints?: readonly string[];
    readonly masquerade?: boolean;
    readonly service?: string | null;
  };
  /** ClientIP affinity: one client reaches exactly one endpoint. */
  readonly affinity?: boolean;
}

/**
 * Where a case's connections come from: the off-node client, pod3 (in the cluster CIDR), or the node
 * itself (its own address as the source: the OUTPUT path).
 */
export type Origin = 'client' | 'pod3' | 'node';
/** A case written before the node exists; the spec places it (`fromNs`) on its node. */
export type NodeCase = Omit<TraceCase, 'fromNs'> & { readonly origin: Origin };

export interface TraceCheckContext {
  readonly node: SimulatedNode;
  /** Every address of the node (a masqueraded connection arrives from one of them). */
  readonly nodeAddresses: readonly string[];
  /** The endpoint (`IP:PORT`) an echo server's name stands for, per protocol. */
  readonly endpointOf: (pod: string, protocol: TraceProtocol) => string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `--proxy-mode` for the trace; omitted: detected from the kernel. */
  readonly mode?: string;
  /** The kernel's rules as text, for failure reports. */
  readonly dumpRules: () => Promise<string>;
}

/** Connections per endpoint of the set: with 3 endpoints chosen at random, missing one in 30 tries has odds ~1.5e-5. */
const TRIES_PER_ENDPOINT = 10;
const CONNECT_TIMEOUT_MS = 1500;
/** A refused connection is answered at once; 3 s covers an ICMP answer that loses the race with connect(). */
const REJECT_TIMEOUT_MS = 3000;
/** Long enough that a delivered SYN would have been answered on this idle veth, short enough to keep the suite quick. */
const DROP_TIMEOUT_MS = 700;

export interface TraceCheckResult {
  readonly trace: PacketTrace;
  readonly traffic: ProbeResult;
}

/** Invocations of the CLI at once: each is a Node start plus a read of the kernel's rules (2 cores). */
const TRACE_CONCURRENCY = 3;

/** `trace --live` of every case (before any traffic), a few at a time; a failed invocation is kept as its Error. */
export async function traceCases(ctx: TraceCheckContext, cases: readonly TraceCase[]): Promise<Map<string, PacketTrace | Error>> {
  const out = new Map<string, PacketTrace | Error>();
  const queue = [...cases];
  const worker = async (): Promise<void> => {
    for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
      const req = { from: c.from, to: `${c.host}:${c.port}`, protocol: c.protocol ?? 'TCP', ...(ctx.mode ? { mode: ctx.mode } : {}) };
      out.set(c.name, await traceLive(ctx.node, req, ctx.env).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e)))));
    }
  };
  await Promise.all(Array.from({ length: TRACE_CONCURRENCY }, worker));
  return out;
}

/** `trace` (of case `c`) against what the shape calls for and against real connections; throws with everything needed to see why. */
export async function confirmWithTraffic(ctx: TraceCheckContext, c: TraceCase, trace: PacketTrace): Promise<TraceCheckResult> {
  const problems = [...predictionProblems(trace, c), ...pathProblems(trace, await ctx.dumpRules())];
  const traffic = await trafficFor(ctx, c, trace);
  problems.push(...trafficProblems(ctx, c, trace, traffic));
  if (problems.length > 0) {
    throw new Error(
      `${c.name}: ${problems.join('; ')}\ntrace: ${JSON.stringify(trace, null, 1)}\ntraffic: ${describeProbe(traffic)}\n${await ctx.dumpRules()}`,
    );
  }
  return { trace, traffic };
}

/** Where the trace differs from what the Service shape calls for. */
function predictionProblems(trace: PacketTrace, c: TraceCase): string[] {
  const out: string[] = [];
  const w = c.want;
  if (trace.verdict !== w.verdict) out.push(`trace verdict ${trace.verdict}, the shape calls for ${w.verdict}`);
  if (w.endpoints && JSON.stringify(trace.endpoints) !== JSON.stringify([...w.endpoints].sort())) {
    out.push(`trace endpoints ${JSON.stringify(trace.endpoints)}, the shape calls for ${JSON.stringify([...w.endpoints].sort())}`);
  }
  if (w.masquerade !== undefined && trace.masquerade !== w.masquerade) out.push(`trace masquerade ${String(trace.masquerade)}, the shape calls for ${String(w.masquerade)}`);
  if (w.service !== undefined && trace.service !== w.service) out.push(`trace service ${String(trace.service)}, the shape calls for ${String(w.service)}`);
  return out;
}

/** Whitespace runs as one space: nft indents and wraps what it lists. */
const squash = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * Path steps whose `rule` the kernel tool did not print: the contract says each step's rule is the
 * rule text as the kernel tool prints it (an iptables-save line, an nft rule or map element).
 */
function pathProblems(trace: PacketTrace, dump: string): string[] {
  if (trace.verdict !== 'ACCEPT' && trace.path.length === 0) return [`a ${trace.verdict} with an empty path`];
  const listing = squash(dump);
  const missing = trace.path.filter((step) => !listing.includes(squash(step.rule)));
  return missing.length === 0 ? [] : [`path steps not printed by the kernel tool: ${missing.map((m) => `${m.where}: ${m.rule}`).join(' | ')}`];
}

/** Real connections for the verdict the trace gave (not the wanted one: the traffic judges the trace). */
function trafficFor(ctx: TraceCheckContext, c: TraceCase, trace: PacketTrace): Promise<ProbeResult> {
  const base = { proto: (c.protocol ?? 'TCP') === 'UDP' ? ('udp' as const) : ('tcp' as const), host: c.host, port: c.port, bind: c.from };
  if (trace.verdict === 'REJECT') return probe(ctx.node, c.fromNs, { ...base, count: 2, timeoutMs: REJECT_TIMEOUT_MS });
  if (trace.verdict === 'DROP') return probe(ctx.node, c.fromNs, { ...base, count: 2, timeoutMs: DROP_TIMEOUT_MS, concurrency: 2 });
  const count = Math.max(4, TRIES_PER_ENDPOINT * trace.endpoints.length);
  return probe(ctx.node, c.fromNs, { ...base, count, timeoutMs: CONNECT_TIMEOUT_MS, concurrency: 4, stopAfterErrors: 4 });
}

/** Where the real connections contradict the trace. */
function trafficProblems(ctx: TraceCheckContext, c: TraceCase, trace: PacketTrace, r: ProbeResult): string[] {
  const protocol = c.protocol ?? 'TCP';
  if (trace.verdict === 'REJECT') return r.errors['ECONNREFUSED'] === r.count ? [] : ['the trace says REJECT but not every connection was refused'];
  if (trace.verdict === 'DROP') return r.errors['TIMEOUT'] === r.count ? [] : ['the trace says DROP but not every connection timed out'];
  if (trace.verdict === 'ACCEPT') return r.ok > 0 ? [`the trace says no Service rule applies, yet a pod answered`] : [];
  const out: string[] = [];
  if (r.ok !== r.count) out.push(`the trace says DNAT but ${r.count - r.ok} of ${r.count} connections failed`);
  const reached = Object.keys(r.byPod).map((pod) => ctx.endpointOf(pod, protocol));
  const outside = reached.filter((e) => !trace.endpoints.includes(e));
  if (outside.length > 0) out.push(`endpoints ${outside.join(', ')} answered but are not in the trace's set`);
  if (c.affinity) {
    if (reached.length !== 1) out.push(`ClientIP affinity: one client reached ${reached.length} endpoints`);
  } else {
    const missed = trace.endpoints.filter((e) => !reached.includes(e));
    if (missed.length > 0) out.push(`the trace's endpoints ${missed.join(', ')} were never reached in ${r.count} connections`);
  }
  const sources = Object.keys(r.sources);
  const wantSources = trace.masquerade ? ctx.nodeAddresses : [c.from];
  const wrong = sources.filter((s) => !wantSources.includes(s));
  if (wrong.length > 0) {
    out.push(`the trace says masquerade=${String(trace.masquerade)} but the endpoints saw source ${wrong.join(', ')} (want ${trace.masquerade ? `a node address: ${ctx.nodeAddresses.join(', ')}` : c.from})`);
  }
  return out;
}

/** Every IPv4/IPv6 address of namespace `ns` (`ip -o addr`), without prefix lengths. */
export async function namespaceAddresses(node: SimulatedNode, ns: string): Promise<string[]> {
  const r = await node.exec(ns, 'ip', ['-o', 'addr', 'show']);
  const out: string[] = [];
  for (const m of r.stdout.matchAll(/\binet6? ([0-9a-f.:]+)\//g)) if (m[1]) out.push(m[1]);
  return out;
}
