/**
 * iptables-save dumps made comparable: two kernels hold "the same rules" when every table has the
 * same chains (policy included) and every chain the same rules in the same order. What does not
 * matter is dropped: packet/byte counters, the header and COMMIT lines, the order in which chains
 * are declared (iptables-nft lists them in creation order, so a long-running proxy and a fresh one
 * differ there), and, on request, stale chains: chains with rules that nothing jumps to (a proxier
 * deletes them later: upstream at most once per syncPeriod in large clusters; packets never reach
 * them). Empty unreachable chains are markers (the canaries, kubelet's hint chain) and always stay.
 * Rule order inside a chain is kept: it decides which rule matches.
 */

export interface ChainRules {
  /** `ACCEPT`/`DROP` for built-in chains, `-` for user chains. */
  readonly policy: string;
  readonly rules: readonly string[];
}

/** table → chain → rules. */
export type RuleSnapshot = Readonly<Record<string, Readonly<Record<string, ChainRules>>>>;

const BUILTIN = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);

/** Parses an `iptables-save` (or `iptables-save -c`) dump. */
export function parseSave(dump: string): RuleSnapshot {
  const out: Record<string, Record<string, { policy: string; rules: string[] }>> = {};
  let table: Record<string, { policy: string; rules: string[] }> | undefined;
  for (const raw of dump.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line === 'COMMIT') continue;
    if (line.startsWith('*')) {
      table = out[line.slice(1)] ??= {};
      continue;
    }
    if (!table) continue;
    if (line.startsWith(':')) {
      const [name, policy = '-'] = line.slice(1).split(/\s+/);
      if (name) table[name] ??= { policy, rules: [] };
      continue;
    }
    // `[pkts:bytes] -A CHAIN …` with -c; `-A CHAIN …` without.
    const rule = line.replace(/^\[\d+:\d+\]\s+/, '');
    const m = /^-A (\S+) ?(.*)$/.exec(rule);
    if (!m) continue;
    (table[m[1]!] ??= { policy: '-', rules: [] }).rules.push(m[2]!);
  }
  return out;
}

/** Chains of `table` that a packet can reach: the built-in ones and whatever they jump or goto to, transitively. */
export function reachableChains(chains: Readonly<Record<string, ChainRules>>): Set<string> {
  const seen = new Set<string>();
  const todo = Object.keys(chains).filter((c) => BUILTIN.has(c));
  while (todo.length > 0) {
    const c = todo.pop()!;
    if (seen.has(c)) continue;
    seen.add(c);
    for (const r of chains[c]?.rules ?? []) {
      for (const m of r.matchAll(/(?:^|\s)-[jg] (\S+)/g)) if (chains[m[1]!]) todo.push(m[1]!);
    }
  }
  return seen;
}

export interface CanonicalOptions {
  /** Only these tables (default: all in the dump). */
  readonly tables?: readonly string[];
  /** Leave out stale chains: user chains with rules that no built-in chain reaches (see staleChains). */
  readonly withoutStale?: boolean;
}

/** A canonical text of the snapshot: tables and chains sorted by name, rules in order, no counters. */
export function canonicalRules(s: RuleSnapshot, o: CanonicalOptions = {}): string {
  const lines: string[] = [];
  for (const table of Object.keys(s).sort()) {
    if (o.tables && !o.tables.includes(table)) continue;
    const chains = s[table]!;
    const stale = o.withoutStale ? new Set(staleIn(chains)) : undefined;
    lines.push(`*${table}`);
    for (const name of Object.keys(chains).sort()) {
      if (stale?.has(name)) continue;
      const c = chains[name]!;
      lines.push(`:${name} ${c.policy}`);
      for (const r of c.rules) lines.push(`-A ${name} ${r}`);
    }
  }
  return lines.join('\n') + '\n';
}

function staleIn(chains: Readonly<Record<string, ChainRules>>): string[] {
  const reached = reachableChains(chains);
  return Object.keys(chains).filter((c) => !reached.has(c) && chains[c]!.rules.length > 0);
}

/** `table/chain` of every stale chain: rules in it, but no built-in chain reaches it. */
export function staleChains(s: RuleSnapshot): string[] {
  return Object.entries(s)
    .flatMap(([table, chains]) => staleIn(chains).map((c) => `${table}/${c}`))
    .sort();
}

/** The lines only in `a` and only in `b` (as multisets), capped, for failure messages. */
export function diffCanonical(a: string, b: string, cap = 40): { onlyA: string[]; onlyB: string[] } {
  const count = (t: string): Map<string, number> => {
    const m = new Map<string, number>();
    for (const l of t.split('\n')) if (l !== '') m.set(l, (m.get(l) ?? 0) + 1);
    return m;
  };
  const ca = count(a);
  const cb = count(b);
  const only = (x: Map<string, number>, y: Map<string, number>): string[] =>
    [...x].flatMap(([l, n]) => Array<string>(Math.max(0, n - (y.get(l) ?? 0))).fill(l)).slice(0, cap);
  return { onlyA: only(ca, cb), onlyB: only(cb, ca) };
}

/** The first chain (`table/chain`) whose declaration or rules differ between two snapshots, with both versions. */
export function firstDifferingChain(a: RuleSnapshot, b: RuleSnapshot, o: CanonicalOptions = {}): string | undefined {
  const tables = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  for (const t of tables) {
    const ca = a[t] ?? {};
    const cb = b[t] ?? {};
    const sa = o.withoutStale ? new Set(staleIn(ca)) : new Set<string>();
    const sb = o.withoutStale ? new Set(staleIn(cb)) : new Set<string>();
    const names = [...new Set([...Object.keys(ca), ...Object.keys(cb)])].filter((c) => !sa.has(c) || !sb.has(c)).sort();
    for (const c of names) {
      const x = sa.has(c) ? undefined : ca[c];
      const y = sb.has(c) ? undefined : cb[c];
      if (JSON.stringify(x) === JSON.stringify(y)) continue;
      const show = (r: ChainRules | undefined): string => (r ? [`:${c} ${r.policy}`, ...r.rules.map((l) => `-A ${c} ${l}`)].slice(0, 30).join('\n      ') : '(absent)');
      return `${t}/${c}:\n    first:\n      ${show(x)}\n    second:\n      ${show(y)}`;
    }
  }
  return undefined;
}
