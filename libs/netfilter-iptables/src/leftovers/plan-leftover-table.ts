import { assertRestorePayload } from '@kube-proxy/core';
import { ruleTarget, tokenize } from '../rule-text.js';
import type { JumpRule, LeftoverTable, OwnedChain } from './leftover-rules.js';

/*
 * A backend's iptables leftovers removed with one iptables-save and one iptables-restore per table
 * (instead of one `iptables -w 5` per jump, flush and delete: ~30 commands per family, each of which
 * iptables-legacy answers by reading and rewriting the whole table). The restore removes our jumps,
 * flushes our chains and deletes those nothing else refers to, in one transaction.
 */

interface SavedRule {
  readonly chain: string;
  readonly text: string;
  readonly tokens: readonly string[] | undefined;
}

/** The chains and rules of one table's iptables-save text (one pass). */
function parseSave(save: string): { chains: Set<string>; rules: SavedRule[] } {
  const chains = new Set<string>();
  const rules: SavedRule[] = [];
  for (const raw of save.split('\n')) {
    const line = raw.trim();
    if (line.startsWith(':')) {
      const end = line.indexOf(' ');
      chains.add(end < 0 ? line.slice(1) : line.slice(1, end));
    } else if (line.startsWith('-A ')) {
      const rest = line.slice(3).trimStart();
      const end = rest.search(/\s/);
      const text = end < 0 ? '' : rest.slice(end).trim();
      let tokens: string[] | undefined;
      try {
        tokens = /(^|\s)(-j|--jump|-g|--goto)\s/.test(text) ? tokenize(text) : undefined;
      } catch {
        tokens = undefined; // an unterminated quote: iptables-save never prints one
      }
      rules.push({ chain: end < 0 ? rest : rest.slice(0, end), text, tokens });
    }
  }
  return { chains, rules };
}

const jumpArgs = (j: JumpRule): string[] => [...(j.match ?? []), ...(j.comment === undefined ? [] : ['-m', 'comment', '--comment', j.comment]), '-j', j.to];
const sameArgs = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

export interface LeftoverPlan {
  /** The iptables-restore --noflush payload; undefined when nothing of ours is in the table. */
  readonly payload: string | undefined;
  /** Owned chains a rule we do not remove still jumps to: flushed, not deleted. */
  readonly kept: readonly { readonly chain: string; readonly referencedFrom: readonly string[] }[];
}

/**
 * One table's cleanup from its iptables-save text: `-D` of every copy of our jumps (by the saved
 * text, which iptables matches exactly), a flush of every owned chain that exists, `-X` of those no
 * other rule refers to. Linear in the saved rules.
 */
export function planLeftoverTable(table: LeftoverTable, save: string, jumps: readonly JumpRule[], chains: readonly OwnedChain[]): LeftoverPlan {
  const saved = parseSave(save);
  const owned = chains.filter((c) => c.table === table && saved.chains.has(c.chain)).map((c) => c.chain);
  const ownedSet = new Set(owned);
  const ours = jumps.filter((j) => j.table === table);
  const deletes: string[] = [];
  const referencedFrom = new Map<string, string[]>();
  for (const rule of saved.rules) {
    const target = rule.tokens ? ruleTarget(rule.tokens)?.target : undefined;
    if (target === undefined || !ownedSet.has(target) || ownedSet.has(rule.chain)) continue;
    const tokens = rule.tokens as readonly string[];
    if (ours.some((j) => j.from === rule.chain && j.to === target && sameArgs(tokens, jumpArgs(j)))) {
      deletes.push(`-D ${rule.chain} ${rule.text}`);
    } else {
      const from = referencedFrom.get(target);
      if (from) from.push(rule.chain);
      else referencedFrom.set(target, [rule.chain]);
    }
  }
  const kept = [...referencedFrom].map(([chain, from]) => ({ chain, referencedFrom: from }));
  if (deletes.length === 0 && owned.length === 0) return { payload: undefined, kept };
  const lines = [`*${table}`, ...deletes, ...owned.map((c) => `:${c} - [0:0]`), ...owned.filter((c) => !referencedFrom.has(c)).map((c) => `-X ${c}`), 'COMMIT'];
  const payload = lines.join('\n') + '\n';
  // Rule texts and chain names read back from iptables-save: checked before they are written.
  assertRestorePayload(payload, lines.length);
  return { payload, kept };
}
