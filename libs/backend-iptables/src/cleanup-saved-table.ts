import type { Table } from '@kube-proxy/netfilter-iptables';
import { ruleTarget, tokenize } from '@kube-proxy/netfilter-iptables';

/** One `-A CHAIN …` line of iptables-save output: its chain, its text after the chain, its jump target. */
export interface SavedRule {
  readonly chain: string;
  /** The rule as iptables-save printed it after `-A CHAIN ` (iptables-restore syntax, kernel's canonical form). */
  readonly text: string;
  /** `-j X` / `-g X` target; undefined for a rule without one (or one whose text cannot be split). */
  readonly target: string | undefined;
}

/** One table of iptables-save output, read once: its chains and its rules, in save order. */
export interface SavedTable {
  readonly table: Table;
  readonly chains: readonly string[];
  readonly rules: readonly SavedRule[];
}

/**
 * Lines parsed between two yields to the event loop. A 10k-service nat table is ~220k lines; read in
 * one synchronous run it would keep a SIGTERM from being handled until it is done.
 */
const LINES_PER_TURN = 10_000;

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const TARGET_FLAGS = [' -j ', ' -g ', ' --jump ', ' --goto '];

/** Where the last target flag of a rule's text starts and the word after it (iptables-save prints single spaces). */
function lastTargetFlag(text: string): { index: number; word: string } | undefined {
  const padded = ` ${text}`;
  let index = -1;
  let flagLength = 0;
  for (const flag of TARGET_FLAGS) {
    const i = padded.lastIndexOf(flag);
    if (i > index) {
      index = i;
      flagLength = flag.length;
    }
  }
  if (index < 0) return undefined;
  const start = index + flagLength;
  const end = padded.indexOf(' ', start);
  return { index: index - 1, word: padded.slice(start, end < 0 ? undefined : end) };
}

/**
 * The target of one rule's text. iptables-save prints the target last, so when the last `-j`/`-g`
 * comes after the last double quote it cannot be inside a quoted comment and is read directly (most
 * of a 10k-service table, with string searches only); otherwise the quote-aware split decides.
 */
function targetOf(text: string): string | undefined {
  const last = lastTargetFlag(text);
  if (!last) return undefined;
  if (last.index > text.lastIndexOf('"')) return last.word;
  try {
    return ruleTarget(tokenize(text))?.target;
  } catch {
    // An unterminated quote: iptables-save never prints one; the rule is treated as jumping nowhere.
    return undefined;
  }
}

/**
 * Reads `table` from iptables-save output in one pass (linear in its lines, yielding to the event
 * loop every LINES_PER_TURN lines). Resolves undefined when the output has no such table.
 */
export async function parseSavedTable(save: string, table: Table): Promise<SavedTable | undefined> {
  const lines = save.split('\n');
  const chains: string[] = [];
  const rules: SavedRule[] = [];
  let inTable = false;
  let found = false;
  for (let i = 0; i < lines.length; i++) {
    if (i > 0 && i % LINES_PER_TURN === 0) await yieldToEventLoop();
    let line = lines[i] as string;
    // `iptables-save -c` prefixes rules with `[packets:bytes] `.
    if (line.startsWith('[')) line = line.replace(/^\[\d+:\d+\]\s+/, '');
    if (line.startsWith('*')) {
      inTable = line.slice(1).trimEnd() === table;
      found ||= inTable;
      continue;
    }
    if (!inTable) continue;
    if (line.trimEnd() === 'COMMIT') {
      inTable = false;
    } else if (line.startsWith(':')) {
      const end = line.indexOf(' ');
      chains.push(end < 0 ? line.slice(1) : line.slice(1, end));
    } else if (line.startsWith('-A ')) {
      const rest = line.slice(3);
      const end = rest.indexOf(' ');
      const chain = end < 0 ? rest : rest.slice(0, end);
      const text = end < 0 ? '' : rest.slice(end).trim();
      rules.push({ chain, text, target: targetOf(text) });
    }
  }
  return found ? { table, chains, rules } : undefined;
}
