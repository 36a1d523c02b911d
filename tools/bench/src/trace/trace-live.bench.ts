/**
 * Benchmark of `kube-proxy trace --live` (issue 22; not a test). For N ClusterIP services × E
 * endpoints (scale-cluster.ts), per mode (iptables-legacy, iptables-nft, nftables): a fresh network
 * namespace is programmed by the real `bin/kube-proxy --once` (trace-bench-node.ts), then, in the same
 * run and namespace (trace-timings.ts), the kernel tool's own save/list of that state, the CLI
 * `bin/kube-proxy trace --live -o json` (mode detected, and again with `--proxy-mode`) and the mode's
 * tracer in process (readLive + trace) are timed.
 * The traced packet goes to the last Service (the end of every linear walk). The bound: trace
 * at most 2× the tool. Needs root (exits 2 otherwise); namespaces `kpts-trace-<pid>-<mode>`, deleted by name.
 *
 * Usage: node tools/bench/dist/trace/trace-live.bench.js [--services=10000] [--endpoints=5]
 *                                      [--modes=iptables-legacy,iptables-nft,nftables] [--rounds=3]
 */
import type { ModeTracer } from '@kube-proxy/core';
import { iptablesBackend } from '@kube-proxy/backend-iptables';
import { nftablesBackend } from '@kube-proxy/backend-nftables';
import { BENCH_NODE } from '../nftables/nft-bench-proxier.js';
import { serviceOf, sliceOf } from '../common/scale-cluster.js';
import { programmedNode, TRACE_BENCH_MODES, type TraceBenchMode } from './trace-bench-node.js';
import { timeKernelList, timeTraceCli, timeTracerInProcess, type TraceTarget } from './trace-timings.js';
import { formatTraceReport, type TraceBenchRow } from './trace-bench-report.js';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** A pod's connection to the last Service's cluster IP: every endpoint of it is a possible answer. */
function lastServiceTarget(services: number, endpoints: number): TraceTarget {
  const destIP = serviceOf(services - 1).spec?.clusterIP;
  if (!destIP) throw new Error('the synthetic Service has no cluster IP');
  const eps = (sliceOf(services - 1, endpoints).endpoints ?? []).map((e) => `${e.addresses[0]}:8080`).sort();
  return {
    packet: { family: 'IPv4', protocol: 'TCP', sourceIP: '10.129.255.1', destIP, destPort: 80, locallyGenerated: false },
    node: { name: BENCH_NODE.name, addresses: [BENCH_NODE.ip] },
    endpoints: eps,
  };
}

function tracerOf(mode: TraceBenchMode): ModeTracer | undefined {
  return mode === 'nftables' ? nftablesBackend.tracer : iptablesBackend.tracer;
}

async function measure(mode: TraceBenchMode, services: number, endpoints: number, rounds: number): Promise<TraceBenchRow> {
  log(`${mode}: programming ${services} services × ${endpoints} endpoints with bin/kube-proxy --once...`);
  const node = await programmedNode(`kpts-trace-${process.pid}-${mode}`, mode, services, endpoints);
  try {
    log(`${mode}: programmed in ${(node.onceMs / 1000).toFixed(1)} s; timing...`);
    const target = lastServiceTarget(services, endpoints);
    const list = await timeKernelList(node, rounds);
    const cli = await timeTraceCli(node, target, rounds);
    const cliMode = await timeTraceCli(node, target, rounds, mode === 'nftables' ? 'nftables' : 'iptables');
    const tracer = tracerOf(mode);
    const inProcess = tracer ? await timeTracerInProcess(node, tracer, target, rounds) : null;
    if (inProcess) log(`${mode}: the tracer's read ran ${inProcess.commands.join(', ')}`);
    return {
      mode,
      services,
      endpoints,
      listBytes: list.bytes,
      listMs: list.medianMs,
      cliMs: cli.medianMs,
      cliModeMs: cliMode.medianMs,
      inProcessMs: inProcess?.medianMs ?? null,
      inProcessReadMs: inProcess?.readMs ?? null,
      inProcessToolsMs: inProcess?.toolsMs ?? null,
      onceMs: node.onceMs,
    };
  } finally {
    await node.destroy();
  }
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) {
    log('trace bench: needs root (network namespaces and the kernel tools); nothing measured');
    process.exit(2);
  }
  const services = Number(arg('services', '10000'));
  const endpoints = Number(arg('endpoints', '5'));
  const rounds = Number(arg('rounds', '3'));
  const modes = arg('modes', TRACE_BENCH_MODES.join(',')).split(',') as TraceBenchMode[];
  const unknown = modes.filter((m) => !TRACE_BENCH_MODES.includes(m));
  if (unknown.length > 0) throw new Error(`unknown mode(s) ${unknown.join(', ')}; known: ${TRACE_BENCH_MODES.join(', ')}`);
  const rows: TraceBenchRow[] = [];
  for (const mode of modes) rows.push(await measure(mode, services, endpoints, rounds));
  const header = `trace --live benchmark — ${new Date().toISOString()}, node ${process.version}, median of ${rounds} after a warm-up, traced: a pod to the last Service`;
  process.stdout.write(formatTraceReport(rows, header));
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
