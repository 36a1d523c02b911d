/*
 * One spelling for a rule whether we wrote it or nft printed it back, so a restart can tell which of
 * the chains a previous process left already hold what this process would write (and leave those
 * alone). nft 1.0.6 prints our rules differently from how we write them:
 *
 *   we write                                      nft prints
 *   mark set mark or 0x00004000                   meta mark set meta mark | 0x00004000
 *   mark and 0x00004000 != 0 …xor 0x00004000      meta mark & 0x00004000 != 0x00000000 …^ 0x00004000
 *   ip daddr { 10.96.0.0/12 } drop                ip daddr 10.96.0.0/12 drop
 *   dnat ip addr . port to numgen … { 0 : a . 80 , 1 : b . 80 }   dnat ip to numgen … { 0 : a . 80, 1 : b . 80 }
 *   ip saddr != { b , a }                         ip saddr != { a, b }   (an interval set, sorted)
 *
 * Every rewrite below is an identity of nft's language (the same rule, spelled two ways), never a
 * simplification that could make two different rules look alike; quoted text (comments) is never
 * touched. A rule nft prints in a way not listed here simply does not compare equal: its chain is
 * rewritten, which is always correct, only slower.
 */

/** `meta mark` is `mark`; `|`, `^`, `&` are `or`, `xor`, `and`. */
const WORDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bmeta mark\b/g, 'mark'],
  [/ \| /g, ' or '],
  [/ \^ /g, ' xor '],
  [/ & /g, ' and '],
  // nft prints a concatenated address . port map target without naming its parts.
  [/\bdnat (ip6?) addr \. port to\b/g, 'dnat $1 to'],
  [/\bsnat (ip6?) addr \. port to\b/g, 'snat $1 to'],
];

/** Hex constants as decimal: nft prints marks as 0x%08x, we may write them shorter or in decimal. */
const HEX = /\b0x([0-9a-fA-F]+)\b/g;

/** Anonymous sets and maps: elements sorted (their order means nothing), one element unbraced. */
const BRACES = /\{ ([^{}]*) \}/g;

function canonicalBraces(inside: string): string {
  const parts = inside.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 1 && !parts[0]!.includes(' : ')) return parts[0]!;
  return `{ ${parts.sort().join(', ')} }`;
}

function canonicalCode(code: string): string {
  let out = code.replace(/\s+/g, ' ');
  for (const [from, to] of WORDS) out = out.replace(from, to);
  out = out.replace(HEX, (_m, hex: string) => String(parseInt(hex, 16)));
  return out.replace(BRACES, (_m, inside: string) => canonicalBraces(inside));
}

/**
 * The canonical spelling of one rule. Quoted strings (comments, whose text nft keeps verbatim) are
 * copied as they are; only the code between them is rewritten.
 */
export function canonicalRule(rule: string): string {
  if (!rule.includes('"')) return canonicalCode(rule.trim());
  const pieces = rule.trim().split('"');
  // Even pieces are code, odd ones quoted text.
  for (let i = 0; i < pieces.length; i += 2) pieces[i] = canonicalCode(pieces[i]!);
  return pieces.join('"');
}

/** A chain's rules in canonical spelling, joined: equal for a chain we wrote and its listing. */
export function canonicalChain(rules: readonly string[]): string {
  let out = '';
  for (let i = 0; i < rules.length; i++) out += (i === 0 ? '' : '\n') + canonicalRule(rules[i]!);
  return out;
}
