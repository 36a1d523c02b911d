/*
 * Reads `nft -t list table ip|ip6 kube-proxy` (terse text: no set or map contents) into what a
 * restart needs: every chain with its base hook and its rules as nft prints them, and the named sets
 * with their timeouts. Text, not JSON: the rules come back in nft's own language, which
 * rule-canonical.ts compares with what we would write, and the text listing is the cheaper of the two
 * (README, "Restart over its own table"). One pass over the lines, no copy of the whole text.
 */
import { isHook, parsePriority } from '../trace/nft-ruleset.js';
import type { KernelChain } from './kernel-table-state.js';

export interface OwnTableText {
  readonly chains: KernelChain[];
  readonly rules: Map<string, string[]>;
  /** Named sets → timeout in seconds (0 when none). */
  readonly sets: Map<string, number>;
}

const BLOCK_OPEN = /^(chain|set|map) ("[^"]*"|\S+) \{$/;
const BASE_LINE = /^type (\S+) hook (\S+)(?: device \S+)? priority ([^;]+);/;
const UNITS: Readonly<Record<string, number>> = { d: 86400, h: 3600, m: 60, s: 1, ms: 0.001 };

/** nft's `3h`, `1d2h46m40s`, `600s` as seconds; NaN when unreadable. */
export function durationSeconds(text: string): number {
  let total = 0;
  let rest = text;
  while (rest !== '') {
    const m = /^(\d+)(ms|d|h|m|s)/.exec(rest);
    if (!m) return NaN;
    total += Number(m[1]) * UNITS[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return Math.round(total);
}

interface Open {
  kind: 'chain' | 'set' | 'map';
  name: string;
  rules: string[];
  base?: KernelChain['base'];
  timeout: number;
}

function close(block: Open, out: OwnTableText): void {
  if (block.kind === 'chain') {
    out.chains.push(block.base ? { name: block.name, base: block.base } : { name: block.name });
    out.rules.set(block.name, block.rules);
  } else if (block.kind === 'set' && !block.name.startsWith('__')) out.sets.set(block.name, block.timeout);
}

function chainLine(block: Open, line: string): void {
  const base = BASE_LINE.exec(line);
  if (base) {
    const priority = parsePriority(base[3]!);
    if (!isHook(base[2]!) || priority === undefined) throw new Error(`unreadable base chain declaration in ${block.name}: ${line}`);
    block.base = { type: base[1]!, hook: base[2], priority };
  } else if (!/^comment "[^"]*"$/.test(line)) block.rules.push(line);
}

/** Parses the terse text listing of our one table; throws on a line it cannot place. */
export function parseOwnTableText(text: string): OwnTableText {
  const out: OwnTableText = { chains: [], rules: new Map(), sets: new Map() };
  let block: Open | null = null;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line === '') continue;
    if (block === null) {
      const open = BLOCK_OPEN.exec(line);
      if (open) {
        const name = open[2]!.startsWith('"') ? open[2]!.slice(1, -1) : open[2]!;
        block = { kind: open[1] as Open['kind'], name, rules: [], timeout: 0 };
      } else if (!/^(table \S+ \S+ \{|comment "[^"]*"|flags \S+|\})$/.test(line)) throw new Error(`unexpected line in the table listing: ${line}`);
      continue;
    }
    if (line === '}') {
      close(block, out);
      block = null;
    } else if (block.kind === 'chain') chainLine(block, line);
    else if (line.startsWith('timeout ')) block.timeout = durationSeconds(line.slice('timeout '.length));
  }
  if (block !== null) throw new Error('the table listing ends inside a block');
  return out;
}
