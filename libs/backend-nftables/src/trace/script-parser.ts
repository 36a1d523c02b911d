/*
 * Reads an `nft -f` script of the kube-proxy table — our --dry-run output, upstream's expected dumps
 * (knftables' fake Dump()) — by running it through the in-memory table that --dry-run itself uses, so
 * `add`, `flush` and `delete` mean here exactly what they mean to the proxier.
 */
import { MemoryNftTable } from '../nft/memory-table.js';
import type { NftFamily } from '../nft/nft-objects.js';
import { isHook, parsePriority, type NftBaseChain, type NftChain, type NftContainer, type NftElement, type NftRuleset } from './nft-ruleset.js';

const BASE = /type (\S+) hook (\S+) priority ([^;]+?)\s*;/;

function baseOf(body: string): NftBaseChain | undefined {
  const m = BASE.exec(body);
  if (!m || !isHook(m[2]!)) return undefined;
  const priority = parsePriority(m[3]!);
  return priority === undefined ? undefined : { type: m[1]!, hook: m[2], priority };
}

/** `KEY [comment "C"] [: VALUE]` → its parts. */
export function parseElementBody(body: string): NftElement {
  let rest = body.trim();
  let value: string | undefined;
  const colon = rest.lastIndexOf(' : ');
  if (colon >= 0) {
    value = rest.slice(colon + 3).trim();
    rest = rest.slice(0, colon);
  }
  let comment: string | undefined;
  const c = / comment "([^"]*)"/.exec(rest);
  if (c) {
    comment = c[1];
    rest = rest.slice(0, c.index) + rest.slice(c.index + c[0].length);
  }
  // A dynamic set's listed elements carry their timers: not part of the key.
  rest = rest.replace(/ (timeout|expires) \S+/g, '').trim();
  return { key: rest, ...(value !== undefined ? { value } : {}), ...(comment !== undefined ? { comment } : {}) };
}

/**
 * The script's lines for `family`'s table: blank lines and `#` comments (upstream's dumps have both)
 * left out, and so are the other family's lines (a dual-stack dry run prints both tables).
 */
function scriptLines(text: string, family: NftFamily): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && l.split(' ', 3)[2] === family);
}

const DEFINITION = /^add (table|chain|set|map) /;

/**
 * A dump of `add` lines only (upstream's expected tables, which its tests compare sorted, so a rule
 * may name a chain added further down: TestOverallNFTablesRules' affinity service) is loaded
 * definitions first, as nft would need it; rule order within a chain and element order are kept.
 * A script that also flushes or deletes (our --dry-run) runs in its own order, where order matters.
 */
export function definitionsFirst(lines: readonly string[]): string[] {
  if (!lines.every((l) => l.startsWith('add '))) return [...lines];
  const table = lines.filter((l) => l.startsWith('add table '));
  const definitions = lines.filter((l) => DEFINITION.test(l) && !l.startsWith('add table '));
  return [...table, ...definitions, ...lines.filter((l) => !DEFINITION.test(l))];
}

export function parseNftScript(text: string, family: NftFamily): NftRuleset {
  const table = new MemoryNftTable(family);
  table.run(definitionsFirst(scriptLines(text, family)));
  return rulesetOfMemoryTable(table);
}

/** The in-memory table (--dry-run's, the unit tests') as the tracer reads it. */
export function rulesetOfMemoryTable(table: MemoryNftTable): NftRuleset {
  const family = table.family;
  const chains = new Map<string, NftChain>();
  for (const name of table.chainNames()) {
    const base = baseOf(table.chainBody(name) ?? '');
    chains.set(name, { name, rules: [...(table.rulesOf(name) ?? [])], ...(base ? { base } : {}) });
  }
  const containers = new Map<string, NftContainer>();
  const sets = new Set(table.setNames());
  for (const name of table.containerNames()) {
    const elements = [...(table.elementsOf(name)?.values() ?? [])].map(parseElementBody);
    containers.set(name, { name, kind: sets.has(name) ? 'set' : 'map', elements });
  }
  return { family, chains, containers };
}
