/**
 * nft helpers for the nftables datapath suite: the kube-proxy tables of a namespace, their dumps for
 * failure reports, and the ServiceCIDR manifest (the only kind that suite writes beyond scenario.ts).
 * Like the iptables helpers of libs/testing/netns, every command runs inside a namespace of the node.
 */
import type { CommandResult, SimulatedNode } from '@kube-proxy/testing-netns';

export type NftFamily = 'ip' | 'ip6';
export const NFT_FAMILIES: readonly NftFamily[] = ['ip', 'ip6'];
export const KUBE_PROXY_TABLE = 'kube-proxy';

/** `nft <args>` inside `ns` (rc ≠ 0 allowed: callers look at it). */
export function nft(node: SimulatedNode, ns: string, args: readonly string[], input?: string): Promise<CommandResult> {
  return node.exec(ns, 'nft', args, { allowFailure: true, timeoutMs: 30_000, ...(input !== undefined ? { input } : {}) });
}

/** The families whose `table <family> kube-proxy` exists in `ns`. */
export async function kubeProxyTables(node: SimulatedNode, ns: string): Promise<NftFamily[]> {
  const r = await nft(node, ns, ['list', 'tables']);
  if (r.code !== 0) throw new Error(`nft list tables in ${ns} failed (${r.code}): ${r.stderr}`);
  return NFT_FAMILIES.filter((f) => new RegExp(`^table ${f} ${KUBE_PROXY_TABLE}$`, 'm').test(r.stdout));
}

/** `nft list table <family> kube-proxy`, or '' when the table does not exist. */
export async function listKubeProxyTable(node: SimulatedNode, ns: string, family: NftFamily = 'ip'): Promise<string> {
  const r = await nft(node, ns, ['list', 'table', family, KUBE_PROXY_TABLE]);
  return r.code === 0 ? r.stdout : '';
}

/** The whole ruleset of `ns` (failure reports): what nft -f loaded, including iptables-nft's tables. */
export async function nftRuleset(node: SimulatedNode, ns: string): Promise<string> {
  const r = await nft(node, ns, ['list', 'ruleset']);
  return r.code === 0 ? r.stdout : `nft list ruleset failed (${r.code}): ${r.stderr}`;
}

/**
 * The `--dry-run` output as nft input: the proxy separates syncs with `# sync …` header lines, which
 * are not part of the table (nft would read them as comments anyway; removed so that what is loaded
 * is exactly the dump form).
 */
export function dryRunToNftInput(stdout: string): string {
  return stdout
    .split('\n')
    .filter((l) => !l.startsWith('# sync'))
    .join('\n');
}

/** A networking.k8s.io/v1 ServiceCIDR (cluster-scoped; `cidrs` in canonical form). */
export function serviceCIDR(name: string, cidrs: readonly string[]): Record<string, unknown> {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'ServiceCIDR',
    metadata: { name },
    spec: { cidrs: [...cidrs] },
  };
}

/**
 * The namespace's ICMP output counters (/proc/net/snmp is per network namespace): `reject` answers
 * with ICMP, which the kernel rate-limits per destination host (net.ipv4.icmp_ratelimit, burst 6),
 * so a reject test's failure is only meaningful next to OutRateLimitHost.
 */
export async function icmpOutCounters(node: SimulatedNode, ns: string): Promise<Record<string, number>> {
  const lines = (await node.exec(ns, 'cat', ['/proc/net/snmp'])).stdout.split('\n').filter((l) => l.startsWith('Icmp: '));
  const [names, values] = lines.map((l) => l.slice('Icmp: '.length).trim().split(/\s+/));
  const out: Record<string, number> = {};
  for (const [i, name] of (names ?? []).entries()) if (name.startsWith('Out')) out[name] = Number(values?.[i]);
  return out;
}
