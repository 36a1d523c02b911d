import type { IPFamily } from '@kube-proxy/core';
import { joinArgs, parseIptablesSave, parseSavedRule, savedChain, type SavedTables } from '@kube-proxy/netfilter-iptables';
import { JUMP_CHAINS, jumpRuleArgs } from '../render/constants.js';
import { iptablesSnapshot, type IptablesSnapshot } from './iptables-snapshot.js';

/**
 * Our --dry-run block of one family (the in-memory tables in iptables-save form). A bare
 * iptables-restore payload has no rules in the built-in chains (the proxier ensures those jumps
 * separately): then the jumps the proxier would ensure are added, so the packet enters KUBE-SERVICES.
 */
export function iptablesSnapshotFromDryRun(text: string, family: IPFamily): IptablesSnapshot {
  const tables = parseIptablesSave(text);
  const added = addKubeJumps(tables);
  return iptablesSnapshot(tables, family, added ? '--dry-run output (with the jump rules the proxier ensures in the built-in chains)' : '--dry-run output');
}

/** Adds JUMP_CHAINS' rules when no built-in nat chain jumps to KUBE-SERVICES; true when it did. */
function addKubeJumps(tables: SavedTables): boolean {
  const entered = ['PREROUTING', 'OUTPUT'].some((hook) => savedChain(tables, 'nat', hook)?.rules.some((r) => r.target?.name === 'KUBE-SERVICES'));
  if (entered || !tables.tables.has('nat')) return false;
  // The proxier ensures each jump with "prepend": the last one ensured comes first in its chain.
  for (const jump of JUMP_CHAINS) {
    const table = tables.tables.get(jump.table);
    if (table === undefined) continue;
    let chain = table.chains.get(jump.srcChain);
    if (chain === undefined) {
      chain = { name: jump.srcChain, policy: 'ACCEPT', rules: [] };
      table.chains.set(jump.srcChain, chain);
    }
    const rule = parseSavedRule(jump.table, `-A ${jump.srcChain} ${joinArgs(jumpRuleArgs(jump))}`);
    if (rule) chain.rules.unshift(rule);
  }
  return true;
}
