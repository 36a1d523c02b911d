import type { CommandExecutor, IPFamily, NoRulesFound } from '@kube-proxy/core';
import { countRulesInChains, readIptablesSaveVariants, savedChain } from '@kube-proxy/netfilter-iptables';
import { iptablesSnapshot, type IptablesSnapshot } from './iptables-snapshot.js';

const SERVICE_CHAIN_PREFIXES = ['KUBE-SVC-', 'KUBE-SEP-'];

/**
 * This host's iptables-mode rules for `family`: iptables-save of nat and filter from both variants.
 * The variant whose nat table holds KUBE-SERVICES (upstream's kube-proxy and ours both write it) is
 * traced; when both do (a node switched variants and kept leftovers), the one with more KUBE-SVC-/
 * KUBE-SEP- rules, and `source` says so.
 */
export async function readLiveIptables(executor: CommandExecutor, family: IPFamily): Promise<IptablesSnapshot | NoRulesFound> {
  const { reads, commands } = await readIptablesSaveVariants(executor, family);
  const candidates = reads
    .filter((r) => savedChain(r.tables, 'nat', 'KUBE-SERVICES') !== undefined)
    .map((read) => ({ read, rules: countRulesInChains(read.tables, 'nat', SERVICE_CHAIN_PREFIXES) }))
    .sort((a, b) => b.rules - a.rules);
  const best = candidates[0];
  if (best === undefined) {
    const printed = reads.map((r) => `${r.command} printed ${r.tableNames.join(' and ')} without it`).join('; ');
    return {
      found: false,
      lookedFor: `the chain KUBE-SERVICES in the ${family} nat table, with ${commands.join(', ')}${printed ? ` (${printed})` : ' (none of them printed a table)'}`,
    };
  }
  let source = `${best.read.command} (${best.read.tableNames.join(', ')}; ${best.rules} KUBE-SVC-/KUBE-SEP- rules)`;
  for (const other of candidates.slice(1)) {
    source += `; ${other.read.command} also holds KUBE-SERVICES, with ${other.rules} KUBE-SVC-/KUBE-SEP- rules: not traced`;
  }
  return iptablesSnapshot(best.read.tables, family, source);
}
