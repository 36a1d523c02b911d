/**
 * Test support: upstream proxier_test.go's assertIPTablesRulesEqual / assertIPTablesChainEqual,
 * as functions returning the values to compare (so spec files can use plain Jest matchers).
 */
import { checkIPTablesRuleJumps, getChain, parseIPTablesDump, sortIPTablesRules } from '@kube-proxy/netfilter-iptables/testing';

/** Removes the common leading indentation and the leading newline (Go's dedent.Dedent + TrimLeft). */
export function dedent(text: string): string {
  const lines = text.split('\n');
  let indent = Infinity;
  for (const l of lines) {
    if (l.trim() === '') continue;
    indent = Math.min(indent, /^[ \t]*/.exec(l)![0].length);
  }
  if (indent === Infinity) indent = 0;
  return lines
    .map((l) => (l.trim() === '' ? '' : l.slice(indent)))
    .join('\n')
    .replace(/^[ \t\n]+/, '');
}

/** [expected, sorted result] for assertIPTablesRulesEqual; plus the consistency check result. */
export function rulesForComparison(expected: string, result: string): { expected: string; actual: string; consistency: string | null } {
  const exp = dedent(expected);
  return {
    expected: exp,
    actual: sortIPTablesRules(result.replace(/^[ \t\n]+/, '')),
    consistency: checkIPTablesRuleJumps(exp),
  };
}

/** The raw rules of one chain of the payload, one per line (assertIPTablesChainEqual's result side). */
export function chainRules(result: string, table: string, chain: string): string {
  const dump = parseIPTablesDump(result.replace(/^[ \t\n]+/, ''));
  const c = getChain(dump, table, chain);
  return c === undefined ? '' : c.rules.map((r) => r.raw + '\n').join('');
}
