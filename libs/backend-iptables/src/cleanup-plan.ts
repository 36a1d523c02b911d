import type { Table } from '@kube-proxy/netfilter-iptables';
import { tokenize } from '@kube-proxy/netfilter-iptables';
import type { SavedRule, SavedTable } from './cleanup-saved-table.js';
import {
  CLEANUP_ONLY_JUMP_CHAINS,
  isServiceChainName,
  JUMP_CHAINS,
  jumpRuleArgs,
  KUBE_CHAINS,
  KUBE_PROXY_CANARY_CHAIN,
  makeChainLine,
} from './render/index.js';

/**
 * The fixed chains this backend creates, by table (upstream's CleanupLeftovers list plus the ones it
 * leaves behind: KUBE-PROXY-FIREWALL, KUBE-MARK-MASQ and the canaries). KUBE-FIREWALL (kubelet's)
 * is never removed, as upstream.
 */
export const OWNED_CHAINS: Readonly<Record<Table, readonly string[]>> = {
  filter: [
    KUBE_CHAINS.SERVICES,
    KUBE_CHAINS.EXTERNAL_SERVICES,
    KUBE_CHAINS.FORWARD,
    KUBE_CHAINS.NODEPORTS,
    KUBE_CHAINS.PROXY_FIREWALL,
    KUBE_PROXY_CANARY_CHAIN,
  ],
  nat: [
    KUBE_CHAINS.SERVICES,
    KUBE_CHAINS.NODEPORTS,
    KUBE_CHAINS.POSTROUTING,
    KUBE_CHAINS.MARK_MASQ,
    KUBE_PROXY_CANARY_CHAIN,
  ],
  mangle: [KUBE_PROXY_CANARY_CHAIN],
};

/** What one table's cleanup removes (in one iptables-restore) and what it must leave. */
export interface TableCleanupPlan {
  readonly table: Table;
  /** Our jump rules (from built-in chains into ours), one entry per copy: removed by their saved text. */
  readonly jumps: readonly SavedRule[];
  /** Owned chains nothing else refers to: flushed and deleted. */
  readonly deletable: readonly string[];
  /** Owned chains a rule we do not remove still refers to, with the chains of those rules. */
  readonly kept: readonly { readonly chain: string; readonly referencedFrom: readonly string[] }[];
}

const sameArgs = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

/** The arguments of our jump rules of `table`, by `srcChain dstChain` (upstream's DeleteRule arguments). */
function jumpArgsByLink(table: Table): Map<string, string[][]> {
  const byLink = new Map<string, string[][]>();
  for (const jump of [...JUMP_CHAINS, ...CLEANUP_ONLY_JUMP_CHAINS]) {
    if (jump.table !== table) continue;
    const key = `${jump.srcChain} ${jump.dstChain}`;
    byLink.set(key, [...(byLink.get(key) ?? []), jumpRuleArgs(jump, true)]);
  }
  return byLink;
}

function ownedIn(saved: SavedTable): Set<string> {
  const fixed = new Set(OWNED_CHAINS[saved.table]);
  return new Set(saved.chains.filter((c) => fixed.has(c) || (saved.table === 'nat' && isServiceChainName(c))));
}

/**
 * Decides one table's cleanup in time linear in its rules: ONE pass over the rules builds the links
 * between owned chains and finds the foreign references, then one walk over those links marks what
 * the foreign references keep alive. (A chain a rule we do not remove still jumps to cannot be
 * deleted — iptables would refuse and fail the whole table — and neither can the chains a kept chain
 * jumps to.) Jump rules whose arguments differ from ours (another tool's, an older proxy's) count as
 * foreign and keep their target, as the one-command-per-rule cleanup did.
 */
export function planTableCleanup(saved: SavedTable): TableCleanupPlan {
  const owned = ownedIn(saved);
  const ourJumps = jumpArgsByLink(saved.table);
  const jumps: SavedRule[] = [];
  /** owned chain -> owned chains its rules jump to */
  const links = new Map<string, string[]>();
  const referencedFrom = new Map<string, string[]>();
  const keep = (chain: string, from: string): void => {
    const refs = referencedFrom.get(chain);
    if (refs) refs.push(from);
    else referencedFrom.set(chain, [from]);
  };
  for (const rule of saved.rules) {
    const target = rule.target;
    if (target === undefined || !owned.has(target)) continue;
    if (owned.has(rule.chain)) {
      const out = links.get(rule.chain);
      if (out) out.push(target);
      else links.set(rule.chain, [target]);
      continue;
    }
    const candidates = ourJumps.get(`${rule.chain} ${target}`);
    if (candidates && candidates.some((args) => sameArgs(args, tokenize(rule.text)))) jumps.push(rule);
    else keep(target, rule.chain);
  }
  // Everything reachable from a kept chain is kept (each chain is visited once).
  const queue = [...referencedFrom.keys()];
  for (let i = 0; i < queue.length; i++) {
    const from = queue[i] as string;
    for (const to of links.get(from) ?? []) {
      if (!referencedFrom.has(to)) queue.push(to);
      keep(to, from);
    }
  }
  const deletable = [...owned].filter((c) => !referencedFrom.has(c));
  const kept = [...referencedFrom].map(([chain, from]) => ({ chain, referencedFrom: [...new Set(from)] }));
  return { table: saved.table, jumps, deletable, kept };
}

/**
 * The one iptables-restore (--noflush) that carries out a plan: our jump rules are removed by their
 * saved text, then every deletable chain is flushed (`:CHAIN - [0:0]`) and deleted (`-X`). It is one
 * transaction, so the Services never exist half-unlinked; undefined when there is nothing to do.
 */
export function renderCleanupRestore(plan: TableCleanupPlan): string | undefined {
  if (plan.jumps.length === 0 && plan.deletable.length === 0) return undefined;
  const lines = [`*${plan.table}`];
  for (const rule of plan.jumps) lines.push(`-D ${rule.chain} ${rule.text}`);
  for (const chain of plan.deletable) lines.push(makeChainLine(chain));
  for (const chain of plan.deletable) lines.push(`-X ${chain}`);
  lines.push('COMMIT', '');
  return lines.join('\n');
}
