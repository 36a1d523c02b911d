import { readFileSync } from 'node:fs';
import { parseNftScript } from '../trace/script-parser.js';
import { canonicalChain, canonicalRule } from './rule-canonical.js';
import { parseOwnTableText } from './own-table-text.js';

const fixture = (name: string) => readFileSync(new URL(`../trace/fixtures/${name}`, import.meta.url), 'utf8');

// Each pair: a script as written (ours: examples.dry-run.nft; upstream's) and nft 1.0.6's listing of
// it once loaded into a network namespace.
const PAIRS: ReadonlyArray<readonly [string, string, 'ip' | 'ip6']> = [
  ['examples.dry-run.nft', 'examples.listing.nft', 'ip'],
  ['upstream-v1.36.nft', 'upstream-v1.36.listing.nft', 'ip'],
  ['upstream-v1.36-overall.nft', 'upstream-v1.36-overall.listing.nft', 'ip'],
  ['upstream-v1.36-repeated.nft', 'upstream-v1.36-repeated.listing.nft', 'ip'],
  ['upstream-v1.31-ipv6.nft', 'upstream-v1.31-ipv6.listing.nft', 'ip6'],
  ['upstream-v1.33.nft', 'upstream-v1.33.listing.nft', 'ip'],
];

describe('canonical rule spelling', () => {
  it.each(PAIRS)('every chain of %s spells the same as in its nft listing', (script, listing, family) => {
    const written = parseNftScript(fixture(script), family);
    // The saved listings open with a `#` note of how they were made.
    const listed = parseOwnTableText(fixture(listing).split('\n').filter((l) => !l.startsWith('#')).join('\n'));
    expect([...listed.rules.keys()].sort()).toEqual([...written.chains.keys()].sort());
    for (const [name, chain] of written.chains) {
      expect({ name, rules: canonicalChain(listed.rules.get(name)!) }).toEqual({ name, rules: canonicalChain(chain.rules) });
    }
  });

  it('rewrites only identities of the language, never comments', () => {
    expect(canonicalRule('mark set mark or 0x4000 comment "a | b 0x10 { x }"')).toBe(canonicalRule('meta mark set meta mark | 0x00004000 comment "a | b 0x10 { x }"'));
    expect(canonicalRule('x comment "0x10"')).not.toBe(canonicalRule('x comment "16"'));
    expect(canonicalRule('ip saddr != { 10.0.0.0/8 , 1.2.3.0/24 } drop')).toBe(canonicalRule('ip saddr != { 1.2.3.0/24, 10.0.0.0/8 } drop'));
    expect(canonicalRule('ip daddr { 10.96.0.0/12 } drop')).toBe(canonicalRule('ip daddr 10.96.0.0/12 drop'));
    expect(canonicalRule('meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 80 , 1 : 10.0.0.2 . 80 }')).toBe(
      canonicalRule('meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.0.0.1 . 80, 1 : 10.0.0.2 . 80 }'),
    );
  });

  it('keeps rules that differ apart', () => {
    const differ: ReadonlyArray<readonly [string, string]> = [
      ['meta l4proto tcp dnat to 10.0.0.1:80', 'meta l4proto tcp dnat to 10.0.0.2:80'],
      ['numgen random mod 2 map { 0 : 10.0.0.1 . 80, 1 : 10.0.0.2 . 80 }', 'numgen random mod 2 map { 0 : 10.0.0.2 . 80, 1 : 10.0.0.1 . 80 }'],
      ['mark set mark or 0x4000', 'mark set mark xor 0x4000'],
      ['ip saddr != { 10.0.0.0/8, 1.2.3.0/24 } drop', 'ip saddr != { 10.0.0.0/8 } drop'],
      ['goto a comment "x"', 'goto a comment "y"'],
    ];
    for (const [a, b] of differ) expect(canonicalRule(a)).not.toBe(canonicalRule(b));
    expect(canonicalChain(['a', 'b'])).not.toBe(canonicalChain(['b', 'a']));
  });
});
