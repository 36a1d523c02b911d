/**
 * What the cleanup bench programs into a throwaway namespace before timing `kube-proxy --cleanup`:
 * a node left by each mode, written by the proxy's own code (the real `kube-proxy --once` for the
 * iptables and nftables modes; the IPVS backend's own renderers for its ipsets, iptables skeleton and
 * kube-ipvs0 addresses — the IPVS virtual servers themselves need the ip_vs kernel module, which
 * only the QEMU VM harness has).
 */
import type { CommandExecutor, CommandOptions, IptablesVariant } from '@kube-proxy/core';
import { Iptables } from '@kube-proxy/netfilter-iptables';
import { nullLogger } from '@kube-proxy/core';
import { IPVS_IPTABLES_JUMPS, renderIpvsIptables } from '@kube-proxy/backend-ipvs/internal';
import { BENCH_NODE } from '../nftables/nft-bench-proxier.js';
import { measureFullSync } from '../ipvs/ipvs-workload.js';
import { KUBE_PROXY_BIN } from '../common/proxy-entry.js';

/** The longest one programming or cleanup step may take (a 10k-service --once on iptables-nft takes ~15–30 s). */
export const STEP_LIMIT_MS = 10 * 60 * 1000;

async function mustRun(executor: CommandExecutor, command: string, args: readonly string[], options: CommandOptions = {}): Promise<{ stdout: string; stderr: string }> {
  const r = await executor.run(command, args, { timeoutMs: STEP_LIMIT_MS, ...options });
  if (r.exitCode !== 0) throw new Error(`${command} ${args.slice(0, 3).join(' ')}: ${r.spawnError ?? r.stderr.trim().slice(-1000)}`);
  return r;
}

async function must(executor: CommandExecutor, command: string, args: readonly string[], options: CommandOptions = {}): Promise<string> {
  return (await mustRun(executor, command, args, options)).stdout;
}

/** `bin/kube-proxy ARGS` inside the namespace: its wall time in ms, its log (stderr) and when it was spawned (epoch ms). */
export async function kubeProxyRun(executor: CommandExecutor, args: readonly string[]): Promise<{ ms: number; log: string; spawnedAt: number }> {
  const spawnedAt = Date.now();
  const started = process.hrtime.bigint();
  const r = await mustRun(executor, KUBE_PROXY_BIN, args, { discardStdout: true });
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, log: r.stderr, spawnedAt };
}

/** `bin/kube-proxy ARGS` inside the namespace; resolves with its wall time in ms (throws on a non-zero exit). */
export async function kubeProxyMs(executor: CommandExecutor, args: readonly string[]): Promise<number> {
  return (await kubeProxyRun(executor, args)).ms;
}

/**
 * An iptables-mode node: kubelet's KUBE-IPTABLES-HINT in `variant` (so the proxy picks that variant,
 * as on a real node), then the real `kube-proxy --proxy-mode=iptables --once` on the manifests.
 */
export async function programIptablesNode(executor: CommandExecutor, variant: IptablesVariant, manifestsDir: string): Promise<void> {
  await must(executor, `iptables-${variant}`, ['-w', '5', '-t', 'mangle', '-N', 'KUBE-IPTABLES-HINT']);
  await kubeProxyMs(executor, ['--proxy-mode=iptables', `--manifests=${manifestsDir}`, '--once', `--hostname-override=${BENCH_NODE.name}`, `--cluster-cidr=${BENCH_NODE.clusterCIDR}`]);
}

/** An nftables-mode node: the real `kube-proxy --proxy-mode=nftables --once` on the manifests. */
export async function programNftablesNode(executor: CommandExecutor, manifestsDir: string): Promise<void> {
  await kubeProxyMs(executor, ['--proxy-mode=nftables', `--manifests=${manifestsDir}`, '--once', `--hostname-override=${BENCH_NODE.name}`, `--cluster-cidr=${BENCH_NODE.clusterCIDR}`]);
}

/**
 * What an IPVS-mode node of `services` Services keeps outside IPVS: its ipsets (`ipset restore`), its
 * iptables skeleton and jumps (the system's `iptables`, as the IPVS cleanup uses), and kube-ipvs0
 * with one address per ClusterIP (`ip -batch`; skipped on a kernel without the dummy driver).
 */
export async function programIpvsLeftovers(executor: CommandExecutor, services: number): Promise<{ addresses: boolean }> {
  const sync = measureFullSync(services);
  await must(executor, 'ipset', ['restore'], { input: sync.payloads.ipset });
  const { payload } = renderIpvsIptables(sync.state, {
    family: 'IPv4',
    masqueradeBit: 14,
    masqueradeAll: false,
    localDetector: { kind: 'cidr', cidr: BENCH_NODE.clusterCIDR },
    randomFully: true,
  });
  await must(executor, 'iptables-restore', ['-w', '5', '--noflush', '--counters'], { input: payload });
  const ipt = new Iptables({ family: 'IPv4', variant: 'nft', executor, logger: nullLogger });
  for (const jump of IPVS_IPTABLES_JUMPS) await ipt.ensureRule('-I', jump.table, jump.from, jump.args);
  // kube-ipvs0 is a dummy link: a kernel without the dummy driver cannot have one (nor run IPVS mode).
  const probe = await executor.run('ip', ['link', 'add', 'kube-ipvs0', 'type', 'dummy']);
  if (probe.exitCode !== 0 && /Unknown device type/i.test(probe.stderr)) return { addresses: false };
  await must(executor, 'ip', ['link', 'del', 'kube-ipvs0']);
  await must(executor, 'ip', ['-batch', '-'], { input: sync.payloads.address });
  return { addresses: true };
}

/** Lines of `iptables-<variant>-save` (both families) that are rules: what a cleanup has to remove. */
export async function iptablesRuleLines(executor: CommandExecutor, variant: IptablesVariant): Promise<number> {
  let n = 0;
  for (const save of [`iptables-${variant}-save`, `ip6tables-${variant}-save`]) {
    n += (await must(executor, save, [])).split('\n').filter((l) => l.startsWith('-A ')).length;
  }
  return n;
}

/** What is left of kube-proxy in the namespace after a cleanup: KUBE- chains, ipsets, kube-ipvs0, the nft table. */
export async function kubeLeftovers(executor: CommandExecutor): Promise<string[]> {
  const left: string[] = [];
  for (const save of ['iptables-legacy-save', 'iptables-nft-save', 'ip6tables-legacy-save', 'ip6tables-nft-save']) {
    const chains = (await must(executor, save, [])).split('\n').filter((l) => /^:KUBE-/.test(l) && !/^:KUBE-(FIREWALL|IPTABLES-HINT|KUBELET-CANARY)\b/.test(l));
    if (chains.length > 0) left.push(`${save}: ${chains.length} KUBE- chains (${chains.slice(0, 3).join(', ')})`);
  }
  const sets = (await must(executor, 'ipset', ['list', '-n'])).split('\n').filter((s) => s.startsWith('KUBE-'));
  if (sets.length > 0) left.push(`${sets.length} KUBE- ipsets`);
  const link = await executor.run('ip', ['link', 'show', 'kube-ipvs0']);
  if (link.exitCode === 0) left.push('kube-ipvs0');
  const tables = await must(executor, 'nft', ['list', 'tables']);
  if (/\bkube-proxy\b/.test(tables)) left.push('nft table kube-proxy');
  return left;
}
