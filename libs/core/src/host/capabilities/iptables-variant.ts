import type { CommandExecutor } from '../command-executor.js';
import type { IptablesVariant } from './types.js';
import { outputOf } from './tool-probe.js';

const KUBELET_CHAINS = /^:(KUBE-IPTABLES-HINT|KUBE-KUBELET-CANARY)\b/m;

/** Rules in an iptables-save dump (lines starting with "-"). */
export function countRules(save: string): number {
  return save.split('\n').filter((l) => l.startsWith('-')).length;
}

export interface VariantDecision {
  readonly variant: IptablesVariant;
  readonly reason: string;
}

/**
 * Which iptables backend holds the node's existing rules, decided the way kubernetes-sigs'
 * iptables-wrapper does, so we program the same tables as kubelet and the CNI plugin:
 *
 * 1. kubelet's chains (KUBE-IPTABLES-HINT / KUBE-KUBELET-CANARY, created in mangle since 1.17) in
 *    iptables-nft — checked with `-t mangle`, which is cheap there;
 * 2. the same chains in iptables-legacy — dumping everything, because `-t mangle` would make the
 *    legacy kernel module create the table;
 * 3. otherwise the backend with more rules;
 * 4. otherwise (a tie, typically no rules at all) the system default from `iptables --version`.
 *
 * Only reads rules; a missing *-save binary counts as "no rules".
 */
export async function decideIptablesVariant(exec: CommandExecutor, systemDefault: IptablesVariant): Promise<VariantDecision> {
  const [nftMangle4, nftMangle6] = await Promise.all([
    outputOf(exec, 'iptables-nft-save', ['-t', 'mangle']),
    outputOf(exec, 'ip6tables-nft-save', ['-t', 'mangle']),
  ]);
  if (KUBELET_CHAINS.test(nftMangle4.stdout) || KUBELET_CHAINS.test(nftMangle6.stdout)) {
    return { variant: 'nft', reason: "kubelet's KUBE-IPTABLES-HINT/KUBE-KUBELET-CANARY chains are in iptables-nft" };
  }
  const [legacy4, legacy6] = await Promise.all([outputOf(exec, 'iptables-legacy-save', []), outputOf(exec, 'ip6tables-legacy-save', [])]);
  if (KUBELET_CHAINS.test(legacy4.stdout) || KUBELET_CHAINS.test(legacy6.stdout)) {
    return { variant: 'legacy', reason: "kubelet's KUBE-IPTABLES-HINT/KUBE-KUBELET-CANARY chains are in iptables-legacy" };
  }
  const [nft4, nft6] = await Promise.all([outputOf(exec, 'iptables-nft-save', []), outputOf(exec, 'ip6tables-nft-save', [])]);
  const legacyRules = countRules(legacy4.stdout) + countRules(legacy6.stdout);
  const nftRules = countRules(nft4.stdout) + countRules(nft6.stdout);
  const counts = `${legacyRules} legacy rule(s), ${nftRules} nft rule(s)`;
  if (legacyRules > nftRules) return { variant: 'legacy', reason: `no kubelet chains found; iptables-legacy holds more rules (${counts})` };
  if (nftRules > legacyRules) return { variant: 'nft', reason: `no kubelet chains found; iptables-nft holds more rules (${counts})` };
  return { variant: systemDefault, reason: `no kubelet chains and no rule majority (${counts}); using the system default (iptables is ${systemDefault})` };
}
