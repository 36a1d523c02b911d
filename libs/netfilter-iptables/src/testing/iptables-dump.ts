/**
 * Test support (not part of the renderer's API): a TypeScript port of the helpers upstream's
 * proxier_test.go uses to compare iptables-restore input with its expected texts —
 * pkg/util/iptables/testing/parse.go (ParseIPTablesDump, ParseRule, IPTablesDump.String) and
 * proxier_test.go's sortIPTablesRules / checkIPTablesRuleJumps.
 */

export interface IPTablesValue {
  readonly negated: boolean;
  readonly value: string;
}

/** A parsed rule: the fields upstream's tests look at (parse.go's Rule). */
export interface Rule {
  readonly raw: string;
  readonly chain: string;
  readonly comment?: IPTablesValue;
  readonly protocol?: IPTablesValue;
  readonly sourceAddress?: IPTablesValue;
  readonly sourceType?: IPTablesValue;
  readonly sourcePort?: IPTablesValue;
  readonly destinationAddress?: IPTablesValue;
  readonly destinationType?: IPTablesValue;
  readonly destinationPort?: IPTablesValue;
  readonly matchSet?: IPTablesValue;
  readonly jump?: IPTablesValue;
  readonly randomFully?: boolean;
  readonly probability?: IPTablesValue;
  readonly dnatDestination?: IPTablesValue;
  readonly affinityCheck?: boolean;
  readonly markCheck?: IPTablesValue;
  readonly ctStateCheck?: IPTablesValue;
  readonly affinityName?: IPTablesValue;
  readonly affinitySeconds?: IPTablesValue;
  readonly affinitySet?: boolean;
  readonly affinityReap?: boolean;
  readonly statisticMode?: IPTablesValue;
}

export interface Chain {
  name: string;
  packets: number;
  bytes: number;
  rules: Rule[];
  /** The input had a "-X name" line. */
  deleted: boolean;
}

export interface Table {
  name: string;
  chains: Chain[];
}

export interface IPTablesDump {
  tables: Table[];
}

type Kind = 'value' | 'bool' | 'chain';
const PARAMS: Record<string, { field: keyof Rule; kind: Kind; negatable: boolean }> = {
  '-A': { field: 'chain', kind: 'chain', negatable: false },
  '--comment': { field: 'comment', kind: 'value', negatable: false },
  '-p': { field: 'protocol', kind: 'value', negatable: true },
  '-s': { field: 'sourceAddress', kind: 'value', negatable: true },
  '--src-type': { field: 'sourceType', kind: 'value', negatable: true },
  '--sport': { field: 'sourcePort', kind: 'value', negatable: true },
  '-d': { field: 'destinationAddress', kind: 'value', negatable: true },
  '--dst-type': { field: 'destinationType', kind: 'value', negatable: true },
  '--dport': { field: 'destinationPort', kind: 'value', negatable: true },
  '--match-set': { field: 'matchSet', kind: 'value', negatable: true },
  '-j': { field: 'jump', kind: 'value', negatable: false },
  '--random-fully': { field: 'randomFully', kind: 'bool', negatable: false },
  '--probability': { field: 'probability', kind: 'value', negatable: false },
  '--to-destination': { field: 'dnatDestination', kind: 'value', negatable: false },
  '--rcheck': { field: 'affinityCheck', kind: 'bool', negatable: true },
  '--mark': { field: 'markCheck', kind: 'value', negatable: true },
  '--ctstate': { field: 'ctStateCheck', kind: 'value', negatable: true },
  '--name': { field: 'affinityName', kind: 'value', negatable: false },
  '--seconds': { field: 'affinitySeconds', kind: 'value', negatable: false },
  '--set': { field: 'affinitySet', kind: 'bool', negatable: true },
  '--reap': { field: 'affinityReap', kind: 'bool', negatable: false },
  '--mode': { field: 'statisticMode', kind: 'value', negatable: false },
};

/** parse.go's ParseRule (non-strict): recognised parameters are parsed, others skipped. */
export function parseRule(rule: string): Rule {
  const words: string[] = [];
  const wordRegex = /(?:^|\s)("[^"]*"|[^"]\S*)/g;
  for (let m = wordRegex.exec(rule); m !== null; m = wordRegex.exec(rule)) {
    words.push(m[1].replace(/^"+|"+$/g, ''));
  }
  if (words.length < 2 || words[0] !== '-A') throw new Error(`bad iptables rule (does not start with "-A CHAIN"): ${rule}`);
  if (words.length < 3) throw new Error(`bad iptables rule (no match rules): ${rule}`);
  const parsed: Record<string, unknown> = { raw: rule };
  let negated = false;
  for (let w = 0; w < words.length; ) {
    const word = words[w];
    if (word === '-m' && w < words.length - 1) {
      w += 2;
      continue;
    }
    if (word === '!') {
      negated = true;
      w++;
      continue;
    }
    const p = PARAMS[word];
    if (p !== undefined) {
      if (negated && !p.negatable) throw new Error(`cannot negate parameter "${word}"`);
      if (p.kind !== 'bool' && w === words.length - 1) throw new Error(`parameter "${word}" requires an argument`);
      if (p.kind === 'bool') {
        parsed[p.field] = !negated;
        w++;
      } else if (p.kind === 'value') {
        parsed[p.field] = { negated, value: words[w + 1] };
        w += 2;
      } else {
        parsed[p.field] = words[w + 1];
        w += 2;
      }
    } else {
      w++;
    }
    negated = false;
  }
  return parsed as unknown as Rule;
}

/** parse.go's ParseIPTablesDump. */
export function parseIPTablesDump(data: string): IPTablesDump {
  const dump: IPTablesDump = { tables: [] };
  let state: 'table' | 'chains' | 'rules' = 'table';
  let t: Table | undefined;
  const lines = data.replace(/^\n+|\n+$/g, '').split('\n');
  for (let raw of lines) {
    for (;;) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) break;
      if (state === 'table') {
        const m = /^\*(.*)$/.exec(line);
        if (m === null) throw new Error(`could not parse iptables data (table ${dump.tables.length + 1} starts with "${line}" not a table name)`);
        t = { name: m[1], chains: [] };
        dump.tables.push(t);
        state = 'chains';
        break;
      }
      if (state === 'chains') {
        const m = /^:([^ ]*) - \[([0-9]*):([0-9]*)\]$/.exec(line);
        if (m === null) {
          state = 'rules';
          raw = line;
          continue; // retry as a rule
        }
        t!.chains.push({ name: m[1], packets: Number(m[2]), bytes: Number(m[3]), rules: [], deleted: false });
        break;
      }
      let m = /^-A ([^ ]*) (.*)$/.exec(line);
      if (m !== null) {
        const c = getChain(dump, t!.name, m[1]);
        if (c === undefined) throw new Error(`error parsing rule "${line}": no such chain "${m[1]}"`);
        if (c.deleted) throw new Error(`cannot add rules to deleted chain "${m[1]}"`);
        c.rules.push(parseRule(line));
      } else if ((m = /^-X (.*)$/.exec(line)) !== null) {
        const c = getChain(dump, t!.name, m[1]);
        if (c === undefined) throw new Error(`error parsing rule "${line}": no such chain "${m[1]}"`);
        if (c.rules.length !== 0) throw new Error(`cannot delete chain "${m[1]}" after adding rules`);
        c.deleted = true;
      } else if (line === 'COMMIT') {
        state = 'table';
      } else {
        throw new Error(`error parsing rule "${line}"`);
      }
      break;
    }
  }
  if (state !== 'table') throw new Error('could not parse iptables data (no COMMIT line?)');
  return dump;
}

/** IPTablesDump.String(): chain lines, then every chain's rules, then -X lines, per table. */
export function dumpToString(dump: IPTablesDump): string {
  let out = '';
  for (const t of dump.tables) {
    out += `*${t.name}\n`;
    for (const c of t.chains) out += `:${c.name} - [${c.packets}:${c.bytes}]\n`;
    for (const c of t.chains) for (const r of c.rules) out += `${r.raw}\n`;
    for (const c of t.chains) if (c.deleted) out += `-X ${c.name}\n`;
    out += 'COMMIT\n';
  }
  return out;
}

export function getTable(dump: IPTablesDump, table: string): Table | undefined {
  return dump.tables.find((t) => t.name === table);
}

export function getChain(dump: IPTablesDump, table: string, chain: string): Chain | undefined {
  return getTable(dump, table)?.chains.find((c) => c.name === chain);
}

/** Number of rules in a table (proxier_test.go's countRules). */
export function countRules(data: string, table: string): number {
  const t = getTable(parseIPTablesDump(data), table);
  if (t === undefined) return -1;
  return t.chains.reduce((n, c) => n + c.rules.length, 0);
}

function stableSort<T>(items: T[], less: (a: T, b: T) => boolean): void {
  // Go's sort.SliceStable with a "less" function.
  const indexed = items.map((item, i) => ({ item, i }));
  indexed.sort((a, b) => (less(a.item, b.item) ? -1 : less(b.item, a.item) ? 1 : a.i - b.i));
  for (let i = 0; i < items.length; i++) items[i] = indexed[i].item;
}

function orderByCommentServiceName(r1: Rule, r2: Rule): boolean {
  if (r1.comment === undefined || r2.comment === undefined) return false;
  let n1 = r1.comment.value;
  let n2 = r2.comment.value;
  const i1 = n1.search(/[ :]/);
  if (i1 !== -1) n1 = n1.slice(0, i1);
  const i2 = n2.search(/[ :]/);
  if (i2 !== -1) n2 = n2.slice(0, i2);
  return n1 < n2;
}

const NODEPORTS = 'KUBE-NODEPORTS';
const SERVICES = 'KUBE-SERVICES';

function chainLess(a: Chain, b: Chain): boolean {
  if (a.name === NODEPORTS) return true;
  if (b.name === NODEPORTS) return false;
  if (a.name === SERVICES) return true;
  if (b.name === SERVICES) return false;
  const ak = a.name.startsWith('KUBE-');
  const bk = b.name.startsWith('KUBE-');
  if (ak && !bk) return true;
  if (!ak && bk) return false;
  return a.name < b.name;
}

/**
 * proxier_test.go's sortIPTablesRules: sorts tables and chains, and the rules of the
 * KUBE-NODEPORTS / KUBE-SERVICES chains by service name (keeping the nat KUBE-SERVICES
 * "must be the last rule" rule last), so results don't depend on service iteration order.
 */
export function sortIPTablesRules(ruleData: string): string {
  const dump = parseIPTablesDump(ruleData);
  // sort.Slice is not stable; names are unique so it does not matter here.
  dump.tables.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const t of dump.tables) {
    t.chains.sort((a, b) => (chainLess(a, b) ? -1 : chainLess(b, a) ? 1 : 0));
  }
  for (const table of ['filter', 'nat']) {
    const np = getChain(dump, table, NODEPORTS);
    if (np !== undefined) stableSort(np.rules, orderByCommentServiceName);
  }
  const fs = getChain(dump, 'filter', SERVICES);
  if (fs !== undefined) stableSort(fs.rules, orderByCommentServiceName);
  const ns = getChain(dump, 'nat', SERVICES);
  if (ns !== undefined) {
    const isLast = (r: Rule) => r.comment !== undefined && r.comment.value.includes('must be the last rule');
    stableSort(ns.rules, (a, b) => {
      if (isLast(a)) return false;
      if (isLast(b)) return true;
      return orderByCommentServiceName(a, b);
    });
  }
  return dumpToString(dump);
}

function findAllMatches(lines: readonly string[], pattern: RegExp): Set<string> {
  const out = new Set<string>();
  for (const line of lines) {
    const m = pattern.exec(line);
    if (m !== null && m[1] !== undefined) out.add(m[1]);
  }
  return out;
}

/** proxier_test.go's checkIPTablesRuleJumps; returns an error message or null. */
export function checkIPTablesRuleJumps(ruleData: string): string | null {
  const rawTables = ruleData.replace(/^\n/, '').split('COMMIT\n');
  const nTables = rawTables.length - 1;
  if (nTables < 2 || rawTables[nTables] !== '') return `bad ruleData (${nTables} tables)`;
  for (const raw of rawTables.slice(0, nTables)) {
    const lines = raw.replace(/^\n+|\n+$/g, '').split('\n');
    const tableName = lines[0].slice(1);
    const created = findAllMatches(lines, /^:([^ ]*)/);
    for (const c of findAllMatches(lines, /-X ([^ ]*)/)) created.delete(c);
    const filled = findAllMatches(lines, /-A ([^ ]*)/);
    const jumped = findAllMatches(lines, /-j ([^ ]*)/);
    for (const t of ['ACCEPT', 'REJECT', 'DROP', 'MARK', 'RETURN', 'DNAT', 'SNAT', 'MASQUERADE']) jumped.delete(t);
    const missing = [...jumped, ...filled].filter((c) => !created.has(c));
    if (missing.length > 0) return `some chains in ${tableName} are used but were not created: ${[...new Set(missing)].join(',')}`;
    const empty = [...jumped].filter((c) => !filled.has(c) && c !== NODEPORTS);
    if (empty.length > 0) return `some chains in ${tableName} are jumped to but have no rules: ${empty.join(',')}`;
    const allowedExtra = new Set([
      SERVICES,
      'KUBE-EXTERNAL-SERVICES',
      NODEPORTS,
      'KUBE-POSTROUTING',
      'KUBE-FORWARD',
      'KUBE-MARK-MASQ',
      'KUBE-PROXY-FIREWALL',
      'KUBE-FIREWALL',
    ]);
    const extra = [...created].filter((c) => !jumped.has(c) && !allowedExtra.has(c));
    if (extra.length > 0) return `some chains in ${tableName} are created but not used: ${extra.join(',')}`;
  }
  return null;
}
