/**
 * `bin/kube-proxy trace --live -o json` inside a namespace of the simulated node, as an operator on
 * that node would run it. The JSON on stdout is the contract (verdict, endpoints, masquerade,
 * service, path, reason); this reads it as core's PacketTrace and refuses anything that breaks it, so
 * a check never compares traffic against a half-parsed answer.
 */
import type { PacketTrace, TraceProtocol } from '@kube-proxy/core';
import type { CommandResult, SimulatedNode } from '@kube-proxy/testing-netns';
import { KUBE_PROXY_BIN } from './proxy.js';

/** One `trace` invocation: the packet and anything else the command line carries. */
export interface TraceRequest {
  readonly from: string;
  readonly to: string;
  readonly protocol?: TraceProtocol;
  /** `--proxy-mode`; omitted: the tracer detects the mode from what the kernel holds. */
  readonly mode?: string;
  readonly extra?: readonly string[];
}

/** Bounds one invocation: reading and parsing a small node's rules takes well under a second. */
const TRACE_TIMEOUT_MS = 30_000;
const VERDICTS = new Set(['DNAT', 'REJECT', 'DROP', 'ACCEPT']);

export function traceArgs(req: TraceRequest): string[] {
  return [
    'trace',
    '--live',
    '-o',
    'json',
    `--from=${req.from}`,
    `--to=${req.to}`,
    `--protocol=${req.protocol ?? 'TCP'}`,
    ...(req.mode ? [`--proxy-mode=${req.mode}`] : []),
    ...(req.extra ?? []),
  ];
}

/** Runs `bin/kube-proxy trace …` in namespace `ns` of `node`; whatever the exit code. */
export function runTraceCommand(
  node: SimulatedNode,
  ns: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<CommandResult> {
  return node.exec(ns, KUBE_PROXY_BIN, args, {
    env: { ...env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' },
    timeoutMs: TRACE_TIMEOUT_MS,
    allowFailure: true,
  });
}

/** `trace --live -o json` in the node's namespace: exit 0 and one contract-conforming JSON object, or a thrown error saying why not. */
export async function traceLive(node: SimulatedNode, req: TraceRequest, env: Readonly<Record<string, string | undefined>> = {}): Promise<PacketTrace> {
  const args = traceArgs(req);
  const r = await runTraceCommand(node, node.ns.node, args, env);
  const what = `kube-proxy ${args.join(' ')}`;
  if (r.code !== 0) throw new Error(`${what} exited ${String(r.code)}:\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-2000)}`);
  return parseTraceJson(r.stdout, what);
}

/** The stdout of `-o json` as a PacketTrace; throws naming the first field that breaks the contract. */
export function parseTraceJson(stdout: string, what: string): PacketTrace {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    throw new Error(`${what}: stdout is not one JSON object:\n${stdout.slice(0, 2000)}`);
  }
  const t = value as Record<string, unknown>;
  const bad = (field: string): never => {
    throw new Error(`${what}: field ${field} breaks the -o json contract: ${JSON.stringify(t[field])}\n${stdout.slice(0, 2000)}`);
  };
  if (typeof t !== 'object' || t === null || Array.isArray(t)) bad('(root)');
  if (typeof t['verdict'] !== 'string' || !VERDICTS.has(t['verdict'])) bad('verdict');
  const endpoints = t['endpoints'];
  if (!Array.isArray(endpoints) || endpoints.some((e) => typeof e !== 'string')) bad('endpoints');
  if (JSON.stringify([...(endpoints as string[])].sort()) !== JSON.stringify(endpoints)) bad('endpoints');
  if (t['verdict'] !== 'DNAT' && (endpoints as string[]).length > 0) bad('endpoints');
  if (typeof t['masquerade'] !== 'boolean') bad('masquerade');
  if (t['service'] !== null && typeof t['service'] !== 'string') bad('service');
  const path = t['path'];
  if (!Array.isArray(path) || path.some((s: Record<string, unknown>) => typeof s?.['where'] !== 'string' || typeof s?.['rule'] !== 'string')) bad('path');
  if (typeof t['reason'] !== 'string' || t['reason'].length === 0) bad('reason');
  return value as PacketTrace;
}
