/**
 * The rules the flush monitor looks for between syncs (core's IptablesFlushMonitor): what the
 * kernel holds as long as nobody removed it, so that `iptables -t nat -F` (no `-X`), `-t filter -F`
 * or `-t nat -F KUBE-SERVICES` is noticed although every chain survives.
 *
 * Only rules no sync of ours ever removes are chosen; otherwise a check landing between a restore
 * and the next update of the expectations would read a legitimate change as a flush:
 * - the jump rules from the built-in chains (JUMP_CHAINS, KUBELET_JUMP_CHAINS), once a full sync
 *   has ensured them; they are never deleted while the proxy runs;
 * - one sentinel per top-level chain whose content does not follow the Services: the last rule of
 *   nat KUBE-POSTROUTING, KUBE-MARK-MASQ, filter KUBE-FORWARD, KUBE-FIREWALL, and of nat
 *   KUBE-SERVICES when it is the NodePorts jump ("must be the last rule in this chain"). They are
 *   read from the AppliedChainMemo, i.e. exactly what the last successful restore wrote.
 * Chains that follow the Services (filter KUBE-SERVICES, KUBE-EXTERNAL-SERVICES, KUBE-NODEPORTS,
 * KUBE-PROXY-FIREWALL, nat KUBE-NODEPORTS, per-service chains) are not watched: they may be
 * empty, and each is rewritten by the next sync that changes it (and by the hourly full sync).
 *
 * mangle: this backend has no rules there (only the empty canary chain, as upstream), so nothing
 * is expected in mangle; a `-t mangle -F` removes nothing of ours, and a deleted canary is the
 * canary's business.
 */
import type { RuleSpec, Table } from '@kube-proxy/netfilter-iptables';
import { tokenize } from '@kube-proxy/netfilter-iptables';
import { appliedChainKey, JUMP_CHAINS, jumpRuleArgs, KUBE_CHAINS, KUBELET_JUMP_CHAINS, type AppliedChainMemo } from '../render/index.js';

/** The top-level chains whose last rule is a sentinel, by table (see the header). */
export const SENTINEL_CHAINS: Readonly<Record<'filter' | 'nat', readonly string[]>> = {
  nat: [KUBE_CHAINS.SERVICES, KUBE_CHAINS.POSTROUTING, KUBE_CHAINS.MARK_MASQ],
  filter: [KUBE_CHAINS.FORWARD, KUBE_CHAINS.KUBELET_FIREWALL],
};

/** The last line of a chain's rules as the memo holds them ("-A CHAIN …\n" lines), or undefined. */
function lastLine(rules: Buffer | undefined): string | undefined {
  if (rules === undefined || rules.length === 0) return undefined;
  let end = rules.length;
  while (end > 0 && rules[end - 1] === 10) end--;
  if (end === 0) return undefined;
  const start = rules.lastIndexOf(10, end - 1) + 1;
  return rules.toString('latin1', start, end);
}

/** `-A CHAIN args…` → { chain, args }; undefined for anything else. */
function ruleOf(line: string): RuleSpec | undefined {
  const tokens = tokenize(line);
  if (tokens[0] !== '-A' || tokens[1] === undefined) return undefined;
  return { chain: tokens[1], args: tokens.slice(2) };
}

/** The sentinel rules of the chains the memo remembers (what the last successful restore wrote). */
export function sentinelRules(memo: AppliedChainMemo): Map<Table, RuleSpec[]> {
  const out = new Map<Table, RuleSpec[]>();
  for (const table of ['nat', 'filter'] as const) {
    for (const chain of SENTINEL_CHAINS[table]) {
      const line = lastLine(memo.get(appliedChainKey(table, chain)));
      const rule = line === undefined ? undefined : ruleOf(line);
      if (rule === undefined || rule.chain !== chain) continue;
      // KUBE-SERVICES ends with the NodePorts jump unless no node address matched: then its last
      // rule is some Service's, which a sync may remove.
      if (chain === KUBE_CHAINS.SERVICES && !endsWithJumpTo(rule, KUBE_CHAINS.NODEPORTS)) continue;
      const list = out.get(table) ?? [];
      list.push(rule);
      out.set(table, list);
    }
  }
  return out;
}

function endsWithJumpTo(rule: RuleSpec, target: string): boolean {
  const n = rule.args.length;
  return n >= 2 && rule.args[n - 2] === '-j' && rule.args[n - 1] === target;
}

/** The jump rules a full sync ensures (ensureJumpRules), by table. */
export function jumpRules(): Map<Table, RuleSpec[]> {
  const out = new Map<Table, RuleSpec[]>();
  for (const jump of [...JUMP_CHAINS, ...KUBELET_JUMP_CHAINS]) {
    const list = out.get(jump.table) ?? [];
    list.push({ chain: jump.srcChain, args: jumpRuleArgs(jump) });
    out.set(jump.table, list);
  }
  return out;
}

/**
 * Everything the flush monitor should find after a successful sync: the jumps (once a full sync
 * ensured them) first, then the sentinels.
 */
export function expectedRules(jumpsEnsured: boolean, memo: AppliedChainMemo): Map<Table, RuleSpec[]> {
  const out = jumpsEnsured ? jumpRules() : new Map<Table, RuleSpec[]>();
  for (const [table, rules] of sentinelRules(memo)) out.set(table, [...(out.get(table) ?? []), ...rules]);
  return out;
}
