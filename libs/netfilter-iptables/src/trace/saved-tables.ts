import { LazySavedRule } from './lazy-saved-rule.js';
import type { SavedRule } from './saved-rule.js';

/*
 * iptables-save output (legacy and nft variants, any number of tables) and the same format of an
 * iptables-restore payload, as the tables a packet tracer walks. Lines the format does not explain
 * (warnings, garbage) are skipped, never fatal: the text comes from a live node we do not own.
 */

export interface SavedChain {
  readonly name: string;
  /** `ACCEPT`/`DROP` for a built-in chain, `-` for a user chain. */
  policy: string;
  rules: SavedRule[];
}

export interface SavedTable {
  readonly name: string;
  readonly chains: Map<string, SavedChain>;
}

export interface SavedTables {
  readonly tables: ReadonlyMap<string, SavedTable>;
  /** Lines that were not understood (kept for a diagnostic, never fatal). */
  readonly skippedLines: readonly string[];
}

/** The chain `table/chain`, if the tables hold it. */
export function savedChain(tables: SavedTables, table: string, chain: string): SavedChain | undefined {
  return tables.tables.get(table)?.chains.get(chain);
}

function chainOf(table: SavedTable, name: string): SavedChain {
  let chain = table.chains.get(name);
  if (chain === undefined) {
    chain = { name, policy: '-', rules: [] };
    table.chains.set(name, chain);
  }
  return chain;
}

/**
 * Parses iptables-save / iptables-restore text. A table that appears twice is merged with restore
 * semantics: a `:CHAIN` line of a later section flushes that chain, `-X CHAIN` deletes it, `-F CHAIN`
 * flushes it.
 */
export function parseIptablesSave(text: string): SavedTables {
  const tables = new Map<string, SavedTable>();
  const skippedLines: string[] = [];
  let table: SavedTable | undefined;
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#') || line === 'COMMIT') continue;
    if (line.startsWith('*')) {
      const name = line.slice(1).trim();
      table = tables.get(name) ?? { name, chains: new Map() };
      tables.set(name, table);
      continue;
    }
    if (table === undefined || !applyLine(table, line)) skippedLines.push(line);
  }
  return { tables, skippedLines };
}

function firstTwoWords(line: string): [string, string | undefined] {
  const a = line.search(/\s/);
  if (a < 0) return [line, undefined];
  const rest = line.slice(a).trimStart();
  const b = rest.search(/\s/);
  return [line.slice(0, a), b < 0 ? rest : rest.slice(0, b)];
}

/** One line inside a table; false when it is not understood. */
function applyLine(table: SavedTable, line: string): boolean {
  if (line.startsWith(':')) {
    const [name, policy] = line.slice(1).split(/\s+/);
    if (!name) return false;
    const chain = chainOf(table, name);
    chain.policy = policy ?? '-';
    chain.rules = [];
    return true;
  }
  const [op, name] = firstTwoWords(line);
  if ((op === '-X' || op === '--delete-chain') && name) {
    table.chains.delete(name);
    return true;
  }
  if ((op === '-F' || op === '--flush') && name) {
    const chain = table.chains.get(name);
    if (chain) chain.rules = [];
    return true;
  }
  if ((op === '-N' || op === '--new-chain') && name) {
    chainOf(table, name);
    return true;
  }
  // `-A CHAIN …`: the rule is parsed when a tracer first looks at it (a 10k-Service node holds
  // ~170k rules, of which a trace reads a few thousand).
  if ((op !== '-A' && op !== '--append') || !name) return false;
  chainOf(table, name).rules.push(new LazySavedRule(table.name, name, line));
  return true;
}
