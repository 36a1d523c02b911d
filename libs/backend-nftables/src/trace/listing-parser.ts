/*
 * Reads `nft list table ip kube-proxy` (or ip6) output as nft 1.0.x prints it: nested blocks, base
 * chains as `type … hook … priority dstnat - 10; policy accept;`, and set/map elements as one
 * `elements = { a, b, … }` that nft wraps over many lines. Everything inside a chain block that is not
 * its declaration or comment is a rule, kept verbatim (it is what an operator sees in the listing).
 */
import type { NftFamily } from '../nft/nft-objects.js';
import { isHook, parsePriority, type NftBaseChain, type NftChain, type NftContainer, type NftElement, type NftRuleset } from './nft-ruleset.js';
import { parseElementBody } from './script-parser.js';

export class NftListingError extends Error {}

const TABLE_OPEN = /^table (ip6?|inet) (\S+) \{$/;
const BLOCK_OPEN = /^(chain|set|map) (\S+|"[^"]*") \{$/;
const BASE_LINE = /^type (\S+) hook (\S+)(?: device \S+)? priority ([^;]+);(?:\s*policy \S+;)?$/;

/** Splits the inside of `elements = { … }` at the commas that are not inside a quoted comment. */
export function splitElements(inside: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of inside) {
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) {
      out.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim() !== '') out.push(current.trim());
  return out;
}

/** Where the `}` that closes an `elements = {` is, or -1 when it is on a later line. */
function closingBrace(text: string): number {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted;
    else if (text[i] === '}' && !quoted) return i;
  }
  return -1;
}

interface Block {
  kind: 'chain' | 'set' | 'map';
  name: string;
  rules: string[];
  base?: NftBaseChain;
  elements: NftElement[];
  /** Collecting an `elements = {` that nft wrapped over several lines. */
  pendingElements?: string;
}

function unquote(name: string): string {
  return name.startsWith('"') && name.endsWith('"') ? name.slice(1, -1) : name;
}

function blockLine(block: Block, line: string): void {
  let fresh = line;
  if (block.pendingElements !== undefined) {
    block.pendingElements += ' ' + line;
  } else if (block.kind !== 'chain') {
    // type, flags, size, timeout, comment, policy: nothing the tracer needs
    if (!line.startsWith('elements = {')) return;
    block.pendingElements = line.slice('elements = {'.length);
    fresh = block.pendingElements;
  } else {
    const base = BASE_LINE.exec(line);
    if (base) {
      const priority = parsePriority(base[3]!);
      if (!isHook(base[2]!) || priority === undefined) throw new NftListingError(`unreadable base chain declaration in ${block.name}: ${line}`);
      block.base = { type: base[1]!, hook: base[2], priority };
    } else if (!/^comment "[^"]*"$/.test(line)) block.rules.push(line);
    return;
  }
  // Only the newest line can close the braces (a quoted comment never spans lines): looking at it
  // alone keeps a 10,000-element map linear to read.
  if (closingBrace(fresh) < 0) return;
  const end = closingBrace(block.pendingElements);
  block.elements.push(...splitElements(block.pendingElements.slice(0, end)).map(parseElementBody));
  delete block.pendingElements;
}

function finish(block: Block, chains: Map<string, NftChain>, containers: Map<string, NftContainer>): void {
  if (block.pendingElements !== undefined) throw new NftListingError(`unterminated elements of ${block.kind} ${block.name}`);
  if (block.kind === 'chain') chains.set(block.name, { name: block.name, rules: block.rules, ...(block.base ? { base: block.base } : {}) });
  else containers.set(block.name, { name: block.name, kind: block.kind, elements: block.elements });
}

/** Parses the listing of one table; `family` is the family the listing must be of. */
export function parseNftListing(text: string, family: NftFamily): NftRuleset {
  const chains = new Map<string, NftChain>();
  const containers = new Map<string, NftContainer>();
  let inTable = false;
  let seen = false;
  let block: Block | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // A saved listing may carry `#` notes before or between tables (nft -f reads them as comments).
    if (line === '' || (!inTable && line.startsWith('#'))) continue;
    if (!inTable) {
      const m = TABLE_OPEN.exec(line);
      if (!m) throw new NftListingError(`expected "table ${family} …{", found: ${line}`);
      if (m[1] !== family) throw new NftListingError(`listing is of table ${m[1]} ${m[2]}, not of family ${family}`);
      inTable = true;
      seen = true;
      continue;
    }
    if (block) {
      if (line === '}' && block.pendingElements === undefined) {
        finish(block, chains, containers);
        block = undefined;
      } else blockLine(block, line);
      continue;
    }
    const open = BLOCK_OPEN.exec(line);
    if (open) block = { kind: open[1] as Block['kind'], name: unquote(open[2]!), rules: [], elements: [] };
    else if (line === '}') inTable = false;
    else if (!/^(comment|flags) /.test(line)) throw new NftListingError(`unexpected line in table: ${line}`);
  }
  if (block || inTable) throw new NftListingError('listing ends inside a block');
  if (!seen) throw new NftListingError(`no table ${family} in the listing`);
  return { family, chains, containers };
}
