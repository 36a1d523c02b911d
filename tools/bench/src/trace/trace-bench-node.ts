/**
 * A network namespace holding a big node's rules for one mode, programmed the way a node gets them:
 * `bin/kube-proxy --proxy-mode=… --manifests=DIR --once` inside the namespace, so the kernel state is
 * exactly what the real proxy and the real tools (iptables-{legacy,nft}-restore, nft) leave, jumps
 * from the built-in chains included. The root namespace is never touched.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NftNamespace } from '../nftables/nft-netns.js';
import { BENCH_NODE } from '../nftables/nft-bench-proxier.js';
import { writeClusterManifests } from '../nftables/nft-proxy-once.js';
import { KUBE_PROXY_BIN } from '../common/proxy-entry.js';

export type TraceBenchMode = 'iptables-legacy' | 'iptables-nft' | 'nftables';
export const TRACE_BENCH_MODES: readonly TraceBenchMode[] = ['iptables-legacy', 'iptables-nft', 'nftables'];

/** A first sync of 10k services: legacy ~3 s, iptables-nft ~6 s, nftables ~13 s of kernel time, plus the proxy's start. */
const ONCE_LIMIT_MS = 10 * 60 * 1000;
const SHORT_MS = 60_000;

export interface TraceBenchNode {
  readonly mode: TraceBenchMode;
  readonly ns: NftNamespace;
  /** Environment for every command in the namespace (the legacy variant's own xtables lock file). */
  readonly env: Readonly<Record<string, string>>;
  /** Wall time of the `--once` that programmed it. */
  readonly onceMs: number;
  destroy(): Promise<void>;
}

/** The kernel tool that saves or lists the whole state the tracer reads (the yardstick). */
export function kernelListCommand(mode: TraceBenchMode): { command: string; args: string[] } {
  if (mode === 'nftables') return { command: 'nft', args: ['list', 'table', 'ip', 'kube-proxy'] };
  return { command: mode === 'iptables-legacy' ? 'iptables-legacy-save' : 'iptables-nft-save', args: [] };
}

/** Creates the namespace and programs `services` × `endpoints` into it with the real proxy. */
export async function programmedNode(name: string, mode: TraceBenchMode, services: number, endpoints: number): Promise<TraceBenchNode> {
  const dir = mkdtempSync(join(tmpdir(), 'kp-bench-trace-'));
  const env: Record<string, string> = mode === 'iptables-legacy' ? { XTABLES_LOCKFILE: join(dir, 'xtables.lock') } : {};
  const ns = await NftNamespace.create(name);
  const destroy = async (): Promise<void> => {
    await ns.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    writeClusterManifests(dir, services, endpoints);
    if (mode !== 'nftables') {
      // kubelet's hint chain: the iptables-mode proxy uses the variant that holds it.
      const tool = mode === 'iptables-legacy' ? 'iptables-legacy' : 'iptables-nft';
      const hint = await ns.executor.run(tool, ['-w', '5', '-t', 'mangle', '-N', 'KUBE-IPTABLES-HINT'], { env, timeoutMs: SHORT_MS });
      if (hint.exitCode !== 0) throw new Error(`${tool} -t mangle -N KUBE-IPTABLES-HINT: ${hint.spawnError ?? hint.stderr}`);
    }
    const args = [
      `--proxy-mode=${mode === 'nftables' ? 'nftables' : 'iptables'}`,
      `--manifests=${dir}`,
      '--once',
      `--hostname-override=${BENCH_NODE.name}`,
      `--cluster-cidr=${BENCH_NODE.clusterCIDR}`,
    ];
    const started = process.hrtime.bigint();
    const r = await ns.executor.run(KUBE_PROXY_BIN, args, { env, timeoutMs: ONCE_LIMIT_MS, discardStdout: true });
    const onceMs = Number(process.hrtime.bigint() - started) / 1e6;
    if (r.exitCode !== 0) throw new Error(`kube-proxy --once (${mode}) exited ${String(r.exitCode)}: ${r.spawnError ?? r.stderr.slice(-2000)}`);
    return { mode, ns, env, onceMs, destroy };
  } catch (e) {
    await destroy();
    throw e;
  }
}
