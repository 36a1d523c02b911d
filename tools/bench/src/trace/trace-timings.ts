/**
 * The three things the trace bench times on one programmed namespace, each the median of a few
 * rounds after one warm-up:
 *  - the kernel tool's own save/list of the state (the yardstick: `iptables-{legacy,nft}-save`,
 *    `nft list table ip kube-proxy`; stdout to /dev/null, so the tool alone);
 *  - `bin/kube-proxy trace --live -o json` in the namespace (process start, reading and parsing the
 *    kernel's state, one trace, the JSON; the mode detected from the kernel, as an operator runs it);
 *  - in process, the mode's ModeTracer: readLive (the tools run and their output parsed) + trace.
 * Every trace is checked to have found the traced Service's endpoints, so a fast wrong answer cannot pass.
 */
import { isNoRulesFound, type CommandExecutor, type CommandOptions, type CommandResult, type ModeTracer, type PacketTrace, type TraceNode, type TracePacket } from '@kube-proxy/core';
import { kernelListCommand, type TraceBenchNode } from './trace-bench-node.js';
import { KUBE_PROXY_BIN } from '../common/proxy-entry.js';

const LIMIT_MS = 5 * 60 * 1000;

/** The traced packet and what its trace must say. */
export interface TraceTarget {
  readonly packet: TracePacket;
  readonly node: TraceNode;
  /** `IP:PORT`, sorted. */
  readonly endpoints: readonly string[];
}

export interface Timed {
  readonly medianMs: number;
  readonly roundsMs: readonly number[];
}

export interface InProcessTimed extends Timed {
  /** readLive's share of the median round (tools + parsing), ms. */
  readonly readMs: number;
  /** Of that, the external tools readLive ran (spawn → exit, stdout collected), ms. */
  readonly toolsMs: number;
  /** The commands readLive ran in the median round, each with its time. */
  readonly commands: readonly string[];
}

/** An executor that times every command it passes on (the tracer's tools, for the read's split). */
class TimingExecutor implements CommandExecutor {
  calls: { line: string; ms: number }[] = [];
  constructor(private readonly inner: CommandExecutor) {}
  async run(command: string, args: readonly string[], options?: CommandOptions): Promise<CommandResult> {
    const t = process.hrtime.bigint();
    const r = await this.inner.run(command, args, options);
    this.calls.push({ line: [command, ...args].join(' '), ms: ms(t) });
    return r;
  }
}

const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function rounds(n: number, once: () => Promise<number>): Promise<Timed> {
  await once(); // warm-up: page cache, the kernel's own caches, the JIT
  const roundsMs: number[] = [];
  for (let i = 0; i < n; i++) roundsMs.push(await once());
  return { medianMs: median(roundsMs), roundsMs };
}

function checkTrace(t: PacketTrace, target: TraceTarget, what: string): void {
  if (t.verdict !== 'DNAT' || JSON.stringify(t.endpoints) !== JSON.stringify(target.endpoints)) {
    throw new Error(`${what}: traced ${t.verdict} ${JSON.stringify(t.endpoints)}, want DNAT ${JSON.stringify(target.endpoints)}`);
  }
}

/** The kernel tool's save/list of the whole state; resolves with the timings and the size of one listing. */
export async function timeKernelList(node: TraceBenchNode, n: number): Promise<Timed & { bytes: number }> {
  const { command, args } = kernelListCommand(node.mode);
  const once = async (): Promise<number> => {
    const t = process.hrtime.bigint();
    const r = await node.ns.executor.run(command, args, { env: node.env, timeoutMs: LIMIT_MS, discardStdout: true });
    const elapsed = ms(t);
    if (r.exitCode !== 0) throw new Error(`${command} ${args.join(' ')}: ${r.spawnError ?? r.stderr.slice(0, 500)}`);
    return elapsed;
  };
  const timed = await rounds(n, once);
  const full = await node.ns.executor.run(command, args, { env: node.env, timeoutMs: LIMIT_MS });
  return { ...timed, bytes: Buffer.byteLength(full.stdout) };
}

/**
 * `bin/kube-proxy trace --live -o json …` in the namespace, wall time spawn → exit; with `proxyMode`
 * the mode is given (`--proxy-mode`) instead of detected.
 */
export async function timeTraceCli(node: TraceBenchNode, target: TraceTarget, n: number, proxyMode?: string): Promise<Timed> {
  const p = target.packet;
  const args = ['trace', '--live', '-o', 'json', `--from=${p.sourceIP}`, `--to=${p.destIP}:${p.destPort}`, `--protocol=${p.protocol}`];
  if (proxyMode) args.push(`--proxy-mode=${proxyMode}`);
  for (const a of target.node.addresses) args.push(`--node-address=${a}`);
  return rounds(n, async () => {
    const t = process.hrtime.bigint();
    const r = await node.ns.executor.run(KUBE_PROXY_BIN, args, { env: node.env, timeoutMs: LIMIT_MS });
    const elapsed = ms(t);
    if (r.exitCode !== 0) throw new Error(`kube-proxy ${args.join(' ')} exited ${String(r.exitCode)}: ${r.spawnError ?? r.stderr.slice(-1500)}`);
    checkTrace(JSON.parse(r.stdout) as PacketTrace, target, 'trace --live (CLI)');
    return elapsed;
  });
}

/** The tracer in this process: readLive over the namespace's tools, then one trace. */
export async function timeTracerInProcess(node: TraceBenchNode, tracer: ModeTracer, target: TraceTarget, n: number): Promise<InProcessTimed> {
  const reads: { readMs: number; calls: { line: string; ms: number }[] }[] = [];
  const timed = await rounds(n, async () => {
    const executor = new TimingExecutor(node.ns.executor);
    const t = process.hrtime.bigint();
    const snapshot = await tracer.readLive(executor, target.packet.family);
    const readMs = ms(t);
    if (isNoRulesFound(snapshot)) throw new Error(`${tracer.mode} tracer found no rules; it looked for ${snapshot.lookedFor}`);
    checkTrace(tracer.trace(snapshot, target.packet, target.node), target, `${tracer.mode} tracer`);
    reads.push({ readMs, calls: executor.calls });
    return ms(t);
  });
  // reads[0] is the warm-up's; the median round's read is the one at the same index + 1.
  const read = reads[1 + timed.roundsMs.indexOf(timed.medianMs)];
  const calls = read?.calls ?? [];
  return {
    ...timed,
    readMs: read?.readMs ?? Number.NaN,
    toolsMs: calls.reduce((sum, c) => sum + c.ms, 0),
    commands: calls.map((c) => `${c.line} (${c.ms.toFixed(0)} ms)`),
  };
}
