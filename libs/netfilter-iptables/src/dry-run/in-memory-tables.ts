import { joinArgs, ruleTarget, tokenize } from '../rule-text.js';
import type { RulePosition } from '../types.js';

/** Built-in chains of each iptables table, in iptables-save order. */
export const BUILTIN_CHAINS: Readonly<Record<string, readonly string[]>> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

/** The order iptables-save prints tables in. */
const TABLE_ORDER = ['raw', 'mangle', 'nat', 'filter', 'security'];

/**
 * The longest line iptables-restore 1.8.9 reads as one line: it reads with fgets into 10,240 bytes,
 * so a longer line's rest becomes a line of its own (measured, nft and legacy).
 */
const RESTORE_READ_LINE_MAX = 10_238;

/** Targets iptables loads as extensions (or verdicts); anything else must be a chain of the table. */
const KNOWN_TARGETS = new Set([
  'ACCEPT', 'DROP', 'RETURN', 'QUEUE', 'REJECT', 'DNAT', 'SNAT', 'MASQUERADE', 'REDIRECT', 'NETMAP', 'MARK',
  'CONNMARK', 'LOG', 'NFLOG', 'NFQUEUE', 'CT', 'NOTRACK', 'TRACE', 'TCPMSS', 'CLASSIFY', 'TPROXY', 'CHECKSUM',
  'SET', 'AUDIT', 'TEE', 'DSCP', 'TOS', 'TTL', 'HL', 'ECN', 'SECMARK', 'CONNSECMARK', 'IDLETIMER', 'LED',
  'RATEEST', 'HMARK', 'SYNPROXY', 'CLUSTERIP', 'ULOG', 'TCPOPTSTRIP', 'DNPT', 'SNPT',
]);

export interface InMemoryRule {
  /** The rule's arguments as text (everything after `-A CHAIN`), as the writer spelled it. */
  readonly text: string;
  /**
   * The chain or target it jumps/goes to (`-j X` / `-g X`), if any. The arguments themselves are
   * not kept: at 10,000 services a ruleset has ~235,000 rules of ~10 arguments each, and holding
   * them as separate strings was most of a --dry-run's memory. -C / -D re-split `text` on demand.
   */
  readonly target: string | undefined;
}

interface ChainState {
  readonly builtin: boolean;
  /** Built-in chains' policy; "-" for user chains. */
  policy: string;
  rules: InMemoryRule[];
}

type TableState = Map<string, ChainState>;

/** An iptables-restore payload that iptables would reject; `line` is the 1-based line it blames. */
export class InMemoryRestoreError extends Error {
  constructor(
    readonly reason: string,
    readonly line: number,
  ) {
    super(`iptables-restore: line ${line} failed: ${reason}`);
    this.name = 'InMemoryRestoreError';
  }
}

/** A single-command failure (iptables -N/-X/-F/… on the model), with iptables' wording. */
export class InMemoryTablesError extends Error {
  constructor(
    message: string,
    /** iptables' exit code for the same failure (1 = "no such chain/rule" or "already exists"). */
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'InMemoryTablesError';
  }
}

export interface InMemoryRestoreOptions {
  /** `--noflush`: keep tables and chains the payload does not declare. */
  readonly noFlush: boolean;
  /**
   * Reject rules whose `-j`/`-g` target is neither a chain of the table nor a known target extension,
   * as iptables does. Default true; loading foreign iptables-save output may want false.
   */
  readonly validateTargets?: boolean;
}

function newTable(name: string): TableState {
  const table: TableState = new Map();
  for (const chain of BUILTIN_CHAINS[name] ?? []) table.set(chain, { builtin: true, policy: 'ACCEPT', rules: [] });
  return table;
}

function cloneTable(table: TableState): TableState {
  const copy: TableState = new Map();
  for (const [name, chain] of table) copy.set(name, { builtin: chain.builtin, policy: chain.policy, rules: [...chain.rules] });
  return copy;
}

function sameArgs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** A matcher for the rule identity -C / -D use (the arguments); the target is compared first, without splitting. */
function matching(args: readonly string[]): (rule: InMemoryRule) => boolean {
  const target = ruleTarget(args)?.target;
  return (rule) => rule.target === target && sameArgs(tokenize(rule.text), args);
}

function makeRule(args: readonly string[], text?: string): InMemoryRule {
  return { text: text ?? joinArgs(args), target: ruleTarget(args)?.target };
}

/** The '\n'-separated lines of latin1 text given as chunks, as `text.split('\n')` would give them. */
function* linesOfChunks(chunks: readonly Uint8Array[]): Generator<string> {
  let carry = '';
  for (const chunk of chunks) {
    const parts = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1').split('\n');
    parts[0] = carry + parts[0];
    carry = parts.pop() as string;
    yield* parts;
  }
  yield carry;
}

/** Strips a leading `[packets:bytes]` counter (iptables-restore --counters / iptables-save -c form). */
function stripCounters(line: string): string {
  return line.replace(/^\[\d+:\d+\]\s+/, '');
}

/** The text after the first `n` whitespace-separated words of `line` (for keeping a rule's spelling). */
function textAfterWords(line: string, n: number): string {
  let rest = line.trimStart();
  for (let i = 0; i < n; i++) {
    const m = /^\S+\s*/.exec(rest);
    if (!m) return '';
    rest = rest.slice(m[0].length);
  }
  return rest.trim();
}

/**
 * An in-memory model of iptables tables: applies iptables-restore payloads with iptables' semantics
 * (`*table`, `:CHAIN POLICY [c:c]` declares a chain and — with --noflush — flushes an existing user
 * chain, `-A`/`-I`/`-D`/`-N`/`-X`/`-F`/`-P`, per-table `COMMIT`), offers the single-command
 * operations (`-N`, `-C`+`-I`/`-A`, `-D`, `-F`, `-X`, `-S`) and prints iptables-save-like text.
 * Used for --dry-run and for analysing iptables-save output; it never touches the host.
 */
export class InMemoryTables {
  private readonly tables = new Map<string, TableState>();

  /**
   * Applies an iptables-restore payload. Each table block takes effect at its COMMIT; a failing line
   * throws InMemoryRestoreError and discards the uncommitted block (earlier COMMITs stay, as with
   * iptables-restore).
   */
  restore(payload: string, options: InMemoryRestoreOptions): void {
    this.restoreLines(payload.split('\n'), options);
  }

  /**
   * restore() over the payload as byte chunks (latin1/ASCII text, split anywhere, even inside a
   * line), decoded one chunk at a time: the whole payload never exists as one string. The dry run
   * of a 10k-service node hands its ~18 MB payload over this way.
   */
  restoreChunks(chunks: readonly Uint8Array[], options: InMemoryRestoreOptions): void {
    this.restoreLines(linesOfChunks(chunks), options);
  }

  /** The lines of a payload (split at '\n'; the last is '' when the payload ends with a newline). */
  private restoreLines(lines: Iterable<string>, options: InMemoryRestoreOptions): void {
    const validateTargets = options.validateTargets ?? true;
    let last = '';
    let current: { name: string; state: TableState } | undefined;
    let lineNo = 0;
    for (const raw of lines) {
      lineNo++;
      last = raw;
      // What iptables-restore would silently read differently from the text: refused, so that the
      // model (and --dry-run output) never shows rules the kernel would not get.
      if (raw.includes('\0')) throw new InMemoryRestoreError('line contains a NUL byte (iptables-restore would drop the rest of the line)', lineNo);
      if (raw.length > RESTORE_READ_LINE_MAX) {
        throw new InMemoryRestoreError(`line is ${raw.length} characters long (iptables-restore would read the part after ${RESTORE_READ_LINE_MAX} as another line)`, lineNo);
      }
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      if (line.startsWith('*')) {
        if (current) throw new InMemoryRestoreError(`table "${current.name}" was not committed`, lineNo);
        const name = line.slice(1).trim();
        if (!BUILTIN_CHAINS[name]) throw new InMemoryRestoreError(`unknown table "${name}"`, lineNo);
        const existing = this.tables.get(name);
        current = { name, state: options.noFlush && existing ? cloneTable(existing) : newTable(name) };
        continue;
      }
      if (!current) throw new InMemoryRestoreError('no table specified', lineNo);
      if (line === 'COMMIT') {
        this.tables.set(current.name, current.state);
        current = undefined;
        continue;
      }
      try {
        if (line.startsWith(':')) {
          this.applyChainLine(current.name, current.state, line);
        } else {
          this.applyCommand(current.state, stripCounters(line), validateTargets);
        }
      } catch (err) {
        if (err instanceof InMemoryRestoreError) throw err;
        throw new InMemoryRestoreError((err as Error).message, lineNo);
      }
    }
    if (current) {
      // iptables-restore: "COMMIT expected at line N" (N = one past the last line).
      throw new InMemoryRestoreError('COMMIT expected', lineNo + (last === '' ? 0 : 1));
    }
  }

  /** The tables that exist (have been created by a restore or a command). */
  tableNames(): string[] {
    return TABLE_ORDER.filter((t) => this.tables.has(t));
  }

  hasTable(table: string): boolean {
    return this.tables.has(table);
  }

  chainExists(table: string, chain: string): boolean {
    return this.tables.get(table)?.has(chain) ?? false;
  }

  /** Chain names of a table in iptables-save order (built-ins, then user chains sorted). */
  chains(table: string): string[] {
    const state = this.tables.get(table);
    return state ? this.orderedChains(table, state) : [];
  }

  /** The rules of a chain (their text after `-A CHAIN`), or undefined when the chain does not exist. */
  rules(table: string, chain: string): string[] | undefined {
    return this.tables.get(table)?.get(chain)?.rules.map((r) => r.text);
  }

  /** Rules anywhere in the table that jump or go to `chain`: `{ chain, index }` of each. */
  referencesTo(table: string, chain: string): { readonly chain: string; readonly index: number }[] {
    const state = this.tables.get(table);
    const refs: { chain: string; index: number }[] = [];
    if (!state) return refs;
    for (const [name, c] of state) {
      c.rules.forEach((rule, index) => {
        if (rule.target === chain) refs.push({ chain: name, index });
      });
    }
    return refs;
  }

  /** `iptables -N` when missing. Returns true when the chain already existed. Creates the table if needed. */
  ensureChain(table: string, chain: string): boolean {
    const state = this.table(table);
    if (state.has(chain)) return true;
    state.set(chain, { builtin: false, policy: '-', rules: [] });
    return false;
  }

  /** `iptables -C`, then `-I`/`-A` when missing. Returns true when the rule already existed. */
  ensureRule(position: RulePosition, table: string, chain: string, args: readonly string[]): boolean {
    const state = this.table(table);
    const c = this.requireChain(state, chain);
    if (c.rules.some(matching(args))) return true;
    try {
      this.checkTarget(state, args, true);
    } catch (err) {
      throw new InMemoryTablesError((err as Error).message, 2);
    }
    const rule = makeRule(args);
    if (position === '-I') c.rules.unshift(rule);
    else c.rules.push(rule);
    return false;
  }

  /** Whether the chain has the rule (`iptables -C`). */
  hasRule(table: string, chain: string, args: readonly string[]): boolean {
    return this.tables.get(table)?.get(chain)?.rules.some(matching(args)) ?? false;
  }

  /** `iptables -D` of the first matching rule; returns whether one was deleted. */
  deleteRule(table: string, chain: string, args: readonly string[]): boolean {
    const c = this.tables.get(table)?.get(chain);
    if (!c) return false;
    const i = c.rules.findIndex(matching(args));
    if (i < 0) return false;
    c.rules.splice(i, 1);
    return true;
  }

  flushChain(table: string, chain: string): void {
    this.requireChain(this.tables.get(table), chain).rules = [];
  }

  deleteChain(table: string, chain: string): void {
    const state = this.tables.get(table);
    this.deleteUserChain(state, chain);
  }

  /** iptables-save-like text of one table ("" when the table does not exist), counters as [0:0]. */
  save(table: string): string {
    return this.saveAll([table]);
  }

  /**
   * iptables-save-like text of the given tables, in the order given (default: every existing table, in
   * iptables-save order). Tables that do not exist are skipped.
   */
  saveAll(tables?: readonly string[]): string {
    return [...this.savePieces(tables)].join('');
  }

  /**
   * The same text as saveAll in pieces of about `pieceChars` characters that end at line ends, each
   * built when asked for: the dry run prints a 10k-service table (~16 MB) this way, waiting for stdout
   * between pieces (one joined string, its line array and the stream's copy were ~50 MB at its peak).
   */
  *savePieces(tables?: readonly string[], pieceChars = 1 << 18): Generator<string> {
    let piece = '';
    for (const table of tables ?? this.tableNames()) {
      const state = this.tables.get(table);
      if (!state) continue;
      piece += `*${table}\n`;
      const order = this.orderedChains(table, state);
      for (const name of order) {
        const c = state.get(name) as ChainState;
        piece += `:${name} ${c.builtin ? c.policy : '-'} [0:0]\n`;
        if (piece.length >= pieceChars) {
          yield piece;
          piece = '';
        }
      }
      for (const name of order) {
        for (const rule of (state.get(name) as ChainState).rules) {
          piece += rule.text === '' ? `-A ${name}\n` : `-A ${name} ${rule.text}\n`;
          if (piece.length >= pieceChars) {
            yield piece;
            piece = '';
          }
        }
      }
      piece += 'COMMIT\n';
    }
    if (piece !== '') yield piece;
  }

  /** Forgets a whole table (as if it never existed). */
  dropTable(table: string): void {
    this.tables.delete(table);
  }

  private table(name: string): TableState {
    let state = this.tables.get(name);
    if (!state) {
      if (!BUILTIN_CHAINS[name]) throw new InMemoryTablesError(`can't initialize iptables table \`${name}': Table does not exist`, 3);
      state = newTable(name);
      this.tables.set(name, state);
    }
    return state;
  }

  private orderedChains(table: string, state: TableState): string[] {
    const builtins = (BUILTIN_CHAINS[table] ?? []).filter((c) => state.get(c)?.builtin);
    const users = [...state.keys()].filter((c) => !state.get(c)?.builtin).sort();
    return [...builtins, ...users];
  }

  private requireChain(state: TableState | undefined, chain: string): ChainState {
    const c = state?.get(chain);
    if (!c) throw new InMemoryTablesError(`No chain/target/match by that name (chain "${chain}")`, 1);
    return c;
  }

  private deleteUserChain(state: TableState | undefined, chain: string): void {
    const c = this.requireChain(state, chain);
    const s = state as TableState;
    if (c.builtin) throw new InMemoryTablesError(`Can't delete built-in chain "${chain}"`, 1);
    if (c.rules.length > 0) throw new InMemoryTablesError(`Directory not empty (chain "${chain}" has rules)`, 1);
    for (const [name, other] of s) {
      if (other.rules.some((r) => r.target === chain)) {
        throw new InMemoryTablesError(`Too many links (chain "${chain}" is referenced from "${name}")`, 1);
      }
    }
    s.delete(chain);
  }

  private checkTarget(state: TableState, args: readonly string[], validate: boolean): void {
    if (!validate) return;
    const target = ruleTarget(args);
    if (!target) return;
    const chain = state.get(target.target);
    if (chain) {
      if (chain.builtin) throw new Error(`Can't jump to built-in chain "${target.target}"`);
      return;
    }
    if (target.goto || !KNOWN_TARGETS.has(target.target)) {
      throw new Error(`Couldn't load target \`${target.target}': No such file or directory`);
    }
  }

  private applyChainLine(table: string, state: TableState, line: string): void {
    const [nameToken, policy = '-'] = line.slice(1).trim().split(/\s+/);
    const name = nameToken ?? '';
    if (name === '') throw new Error('empty chain name');
    if (name.length > 28) throw new Error(`chain name "${name}" too long (must be under 29 chars)`);
    const builtin = (BUILTIN_CHAINS[table] ?? []).includes(name);
    if (builtin) {
      const c = state.get(name);
      if (c && policy !== '-') c.policy = policy;
      return;
    }
    if (policy !== '-') throw new Error(`Can't set policy \`${policy}' on user-defined chain \`${name}'`);
    const existing = state.get(name);
    if (existing) existing.rules = [];
    else state.set(name, { builtin: false, policy: '-', rules: [] });
  }

  /** `-I chain [position] rule...`: position 1 (the top) when not given. */
  private insertRuleCommand(state: TableState, chain: string, tokens: readonly string[], line: string, validateTargets: boolean): void {
    const c = this.requireChain(state, chain);
    let args = tokens.slice(2);
    let position = 1;
    let skip = 2;
    if (args.length > 0 && /^\d+$/.test(args[0] as string)) {
      position = Number(args[0]);
      args = args.slice(1);
      skip = 3;
    }
    if (position < 1 || position > c.rules.length + 1) throw new Error('Index of insertion too big');
    this.checkTarget(state, args, validateTargets);
    c.rules.splice(position - 1, 0, makeRule(args, textAfterWords(line, skip)));
  }

  /** `-D chain rulenum` or `-D chain rule...` (the first rule matching it). */
  private deleteRuleCommand(state: TableState, chain: string, args: readonly string[]): void {
    const c = this.requireChain(state, chain);
    if (args.length === 1 && /^\d+$/.test(args[0] as string)) {
      const index = Number(args[0]) - 1;
      if (index < 0 || index >= c.rules.length) throw new Error('Index of deletion too big');
      c.rules.splice(index, 1);
      return;
    }
    const i = c.rules.findIndex(matching(args));
    if (i < 0) throw new Error('Bad rule (does a matching rule exist in that chain?)');
    c.rules.splice(i, 1);
  }

  private applyCommand(state: TableState, line: string, validateTargets: boolean): void {
    const tokens = tokenize(line);
    const [op, chain] = tokens;
    switch (op) {
      case '-A':
      case '--append': {
        const c = this.requireChain(state, chain ?? '');
        const args = tokens.slice(2);
        this.checkTarget(state, args, validateTargets);
        c.rules.push(makeRule(args, textAfterWords(line, 2)));
        return;
      }
      case '-I':
      case '--insert':
        this.insertRuleCommand(state, chain ?? '', tokens, line, validateTargets);
        return;
      case '-D':
      case '--delete':
        this.deleteRuleCommand(state, chain ?? '', tokens.slice(2));
        return;
      case '-N':
      case '--new-chain': {
        if (!chain) throw new Error('-N requires a chain name');
        if (state.has(chain)) throw new Error('Chain already exists');
        state.set(chain, { builtin: false, policy: '-', rules: [] });
        return;
      }
      case '-X':
      case '--delete-chain': {
        if (chain) {
          this.deleteUserChain(state, chain);
          return;
        }
        for (const [name, c] of [...state]) if (!c.builtin) this.deleteUserChain(state, name);
        return;
      }
      case '-F':
      case '--flush': {
        if (chain) {
          this.requireChain(state, chain).rules = [];
          return;
        }
        for (const c of state.values()) c.rules = [];
        return;
      }
      case '-P':
      case '--policy': {
        const c = this.requireChain(state, chain ?? '');
        if (!c.builtin) throw new Error(`Can't set policy on user-defined chain "${chain}"`);
        c.policy = tokens[2] ?? c.policy;
        return;
      }
      case '-Z':
      case '--zero':
        return;
      default:
        throw new Error(`unknown command "${op ?? ''}"`);
    }
  }
}
