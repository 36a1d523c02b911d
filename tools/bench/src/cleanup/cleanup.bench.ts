/**
 * Benchmark of `kube-proxy --cleanup` (not a test). For N ClusterIP services × 5 endpoints it programs
 * a fresh network namespace as a node of one mode left it (cleanup-nodes.ts: the real proxy's own
 * rules), then times the real `bin/kube-proxy --cleanup` inside that namespace (wall time, spawn to
 * exit: Node start, every backend's cleanup for both families and every iptables variant) and checks
 * that nothing of kube-proxy is left. Modes:
 *   legacy, nft — an iptables-mode node on iptables-legacy / iptables-nft,
 *   ipvs        — an IPVS-mode node's ipsets, iptables skeleton and kube-ipvs0 addresses (the virtual
 *                 servers need the ip_vs module: only the QEMU VM harness has it),
 *   nftables    — an nftables-mode node's kube-proxy table.
 * Needs root. The root namespace is never touched.
 *
 * The start-up and per-backend columns come from the run's own log timestamps (cleanup-phases.ts).
 *
 * Usage: node tools/bench/dist/cleanup/cleanup.bench.js [--sizes=1000,10000] [--modes=legacy,nft,ipvs,nftables]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandExecutor } from '@kube-proxy/core';
import { iptablesRuleLines, kubeLeftovers, kubeProxyRun, programIpvsLeftovers, programIptablesNode, programNftablesNode } from './cleanup-nodes.js';
import { cleanupPhases, type CleanupPhases } from './cleanup-phases.js';
import { withNamespace } from '../nftables/nft-netns.js';
import { writeClusterManifests } from '../nftables/nft-proxy-once.js';

const ENDPOINTS_PER_SERVICE = 5;
const MODES = ['legacy', 'nft', 'ipvs', 'nftables'] as const;
type Mode = (typeof MODES)[number];

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

const fmt = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);

interface Row {
  readonly mode: Mode;
  readonly n: number;
  readonly programmed: string;
  readonly cleanupMs: number;
  readonly phases: CleanupPhases | undefined;
}

/** Programs `mode`'s node; resolves with a short description of what was programmed. */
async function program(mode: Mode, executor: CommandExecutor, n: number, manifests: string): Promise<string> {
  if (mode === 'legacy' || mode === 'nft') {
    await programIptablesNode(executor, mode, manifests);
    return `${(await iptablesRuleLines(executor, mode)).toLocaleString('en-US')} iptables rules`;
  }
  if (mode === 'ipvs') {
    const { addresses } = await programIpvsLeftovers(executor, n);
    return `ipsets + iptables skeleton${addresses ? ` + ${n.toLocaleString('en-US')} kube-ipvs0 addresses` : ' (no kube-ipvs0: this kernel has no dummy driver)'}`;
  }
  await programNftablesNode(executor, manifests);
  return 'kube-proxy nft table';
}

async function measure(mode: Mode, n: number, manifests: string): Promise<Row> {
  return withNamespace(`kpcl-bench-${process.pid}-${mode}`, async (ns) => {
    const programmed = await program(mode, ns.executor, n, manifests);
    const before = await kubeLeftovers(ns.executor);
    if (before.length === 0) throw new Error(`${mode}: nothing was programmed`);
    // -v=4: the log lines that time each backend (cleanup-phases.ts).
    const run = await kubeProxyRun(ns.executor, ['--cleanup', '-v=4']);
    const cleanupMs = run.ms;
    const phases = cleanupPhases(run.log, run.spawnedAt);
    const after = await kubeLeftovers(ns.executor);
    if (after.length > 0) throw new Error(`${mode} at ${n}: --cleanup left ${after.join('; ')}`);
    process.stderr.write(`  ${n} services, ${mode}: ${programmed}, --cleanup ${fmt(cleanupMs)} ${JSON.stringify(phases)}\n`);
    return { mode, n, programmed, cleanupMs, phases };
  });
}

const BACKENDS = ['iptables', 'ipvs', 'nftables', 'userspace'];

/** Start-up and each backend's time, from the run's own log ("?" when a line was missing). */
function phaseCells(p: CleanupPhases | undefined): string {
  const backendMs = (mode: string) => p?.backends.find((b) => b.mode === mode)?.ms;
  return [p?.startupMs, ...BACKENDS.map(backendMs)].map((ms) => (ms === undefined ? '?' : fmt(ms))).join(' | ');
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('the cleanup bench needs root (network namespaces)');
  const sizes = arg('sizes', '1000,10000').split(',').map(Number);
  const modes = arg('modes', MODES.join(',')).split(',') as Mode[];
  for (const m of modes) if (!MODES.includes(m)) throw new Error(`unknown mode ${m} (${MODES.join(', ')})`);
  const rows: Row[] = [];
  for (const n of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'kp-cleanup-bench-'));
    try {
      writeClusterManifests(dir, n, ENDPOINTS_PER_SERVICE);
      for (const mode of modes) rows.push(await measure(mode, n, dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const out = [
    `kube-proxy --cleanup benchmark — ${new Date().toISOString()}, node ${process.version}, ${ENDPOINTS_PER_SERVICE} endpoints/service, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    '',
    '| left by | services | programmed | `kube-proxy --cleanup` (wall) | start-up | iptables backend | ipvs backend | nftables backend | userspace backend |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.mode} | ${r.n.toLocaleString('en-US')} | ${r.programmed} | ${fmt(r.cleanupMs)} | ${phaseCells(r.phases)} |`),
  ];
  process.stdout.write(out.join('\n') + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
