/**
 * What the flush monitor (core's IptablesFlushMonitor) looks for after a sync installed the
 * capture rules, so that `iptables -t nat -F` / `-t filter -F` (chains kept) or a flush of one
 * capture chain is noticed within one syncPeriod and repaired by a resync:
 * - the five jump rules from the built-in chains (USERSPACE_JUMPS), exactly as ensured;
 * - the last rule of each capture chain that the sync left non-empty.
 * The proxier clears the expectations before it rewrites the chains and sets them again once the
 * rewrite and the jumps succeeded, so a check never takes a rule the sync itself replaced for a flush.
 */
import type { JumpRule, RuleSpec, Table } from '@kube-proxy/netfilter-iptables';
import { tokenize } from '@kube-proxy/netfilter-iptables';
import { USERSPACE_JUMPS } from '../cleanup.js';

/** The arguments of a jump rule as the proxier ensures it (match, comment, target). */
export function captureJumpArgs(jump: JumpRule): string[] {
  return [...(jump.match ?? []), '-m', 'comment', '--comment', jump.comment ?? '', '-j', jump.to];
}

/** The last `-A` rule of each chain in an iptables-restore payload, by table (chains in payload order). */
export function lastRulePerChain(payload: string): Map<Table, RuleSpec[]> {
  const last = new Map<Table, Map<string, string>>();
  let table: Table | undefined;
  for (const line of payload.split('\n')) {
    if (line.startsWith('*')) {
      const name = line.slice(1).trim();
      table = name === 'nat' || name === 'filter' || name === 'mangle' ? name : undefined;
    } else if (table !== undefined && line.startsWith('-A ')) {
      const chain = line.slice(3, line.indexOf(' ', 3) < 0 ? undefined : line.indexOf(' ', 3));
      let chains = last.get(table);
      if (chains === undefined) last.set(table, (chains = new Map()));
      chains.set(chain, line);
    }
  }
  const out = new Map<Table, RuleSpec[]>();
  for (const [t, chains] of last) {
    out.set(
      t,
      [...chains.values()].map((line) => {
        const tokens = tokenize(line);
        return { chain: tokens[1] as string, args: tokens.slice(2) };
      }),
    );
  }
  return out;
}

/** Everything a successful sync with this capture payload left in the kernel that a flush would remove. */
export function expectedCaptureRules(payload: string): Map<Table, RuleSpec[]> {
  const out = new Map<Table, RuleSpec[]>();
  for (const jump of USERSPACE_JUMPS) {
    const list = out.get(jump.table) ?? [];
    list.push({ chain: jump.from, args: captureJumpArgs(jump) });
    out.set(jump.table, list);
  }
  for (const [table, rules] of lastRulePerChain(payload)) out.set(table, [...(out.get(table) ?? []), ...rules]);
  return out;
}
