import { COMMENT_BYTES_MAX, NAME_BYTES_MAX, utf8Length } from './nft-limits.js';
import { TABLE_COMMENT, TABLE_NAME, quoted, type NftFamily } from './nft-objects.js';

/** A transaction the in-memory table refused, with the 1-based line it failed on (as nft reports it). */
export class NftTransactionError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly text: string,
  ) {
    super(`line ${line}: ${message}: ${text}`);
  }
}

interface MemoryChain {
  /** Everything after the chain name on its `add chain` line ("" for a regular chain). */
  body: string;
  rules: string[];
}

interface MemoryContainer {
  kind: 'set' | 'map';
  body: string;
  /** key → element body (`KEY [comment "C"] [: VALUE]`). */
  elements: Map<string, string>;
}

/** The chains a rule or a map element sends packets to, and the sets and maps it looks up. */
function references(text: string): { chains: string[]; containers: string[] } {
  const chains: string[] = [];
  const containers: string[] = [];
  const words = text.split(' ');
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if ((w === 'goto' || w === 'jump') && i + 1 < words.length) chains.push(words[i + 1]);
    else if (w.startsWith('@') && w.length > 1) containers.push(w.slice(1));
  }
  return { chains, containers };
}

/** The key of an element body: what comes before ` comment "` or ` : `. */
function elementKey(body: string): string {
  let end = body.length;
  const comment = body.indexOf(' comment "');
  if (comment >= 0) end = comment;
  const colon = body.indexOf(' : ');
  if (colon >= 0 && colon < end) end = colon;
  return body.slice(0, end);
}

function elementValue(body: string): string {
  const colon = body.lastIndexOf(' : ');
  return colon < 0 ? '' : body.slice(colon + 3);
}

const COMMENT = / comment "([^"]*)"/g;

/** The kernel's and nft's length limits (nft-limits.ts), refused with the errors nft prints. */
function checkLengths(name: string, tail: string): void {
  if (utf8Length(name) > NAME_BYTES_MAX) throw new Error('Could not process rule: Numerical result out of range');
  for (const m of tail.matchAll(COMMENT)) {
    if (utf8Length(m[1]) > COMMENT_BYTES_MAX) throw new Error(`comment too long, ${COMMENT_BYTES_MAX} characters maximum allowed`);
  }
}

function sorted<K extends string>(keys: Iterable<K>): K[] {
  return [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The kube-proxy table of one family held in memory, driven by the very transaction text the
 * proxier sends to `nft -f -`: what --dry-run prints and what the unit tests inspect. It keeps the
 * kernel's rules that matter for a proxier's correctness: a transaction is atomic (a failing line
 * undoes the lines before it), rules and map elements may only name chains, sets and maps that
 * exist, a chain, set or map still referenced cannot be deleted, and names and comments are held
 * to nft's length limits.
 */
export class MemoryNftTable {
  private exists = false;
  private readonly chains = new Map<string, MemoryChain>();
  private readonly containers = new Map<string, MemoryContainer>();
  /** How many rules and elements reference each chain, set or map. */
  private readonly refs = new Map<string, number>();
  private readonly prefix: string;

  constructor(readonly family: NftFamily) {
    this.prefix = `${family} ${TABLE_NAME}`;
  }

  get tableExists(): boolean {
    return this.exists;
  }

  chainNames(): string[] {
    return [...this.chains.keys()];
  }

  setNames(): string[] {
    return [...this.containers.entries()].filter(([, c]) => c.kind === 'set').map(([n]) => n);
  }

  /** What follows a chain's name on its `add chain` line ("" for a regular chain). */
  chainBody(chain: string): string | undefined {
    return this.chains.get(chain)?.body;
  }

  containerNames(): string[] {
    return [...this.containers.keys()];
  }

  containerBody(name: string): string | undefined {
    return this.containers.get(name)?.body;
  }

  rulesOf(chain: string): readonly string[] | undefined {
    return this.chains.get(chain)?.rules;
  }

  /** key → element body of a set or map. */
  elementsOf(container: string): ReadonlyMap<string, string> | undefined {
    return this.containers.get(container)?.elements;
  }

  /** Applies `lines` as one atomic transaction; throws NftTransactionError (and changes nothing) on the first bad line. */
  run(lines: readonly string[]): void {
    const undo: Array<() => void> = [];
    for (let i = 0; i < lines.length; i++) {
      try {
        this.apply(lines[i], undo);
      } catch (err) {
        for (let u = undo.length - 1; u >= 0; u--) undo[u]();
        throw new NftTransactionError((err as Error).message, i + 1, lines[i]);
      }
    }
  }

  /** Deletes the table (someone ran `nft delete table`, or --cleanup). */
  deleteTable(): void {
    this.exists = false;
    this.chains.clear();
    this.containers.clear();
    this.refs.clear();
  }

  private ref(name: string, delta: number): void {
    const n = (this.refs.get(name) ?? 0) + delta;
    if (n === 0) this.refs.delete(name);
    else this.refs.set(name, n);
  }

  private hold(text: string, undo: Array<() => void>): void {
    const { chains, containers } = references(text);
    for (const c of chains) if (!this.chains.has(c)) throw new Error(`No such file or directory (chain ${c})`);
    for (const s of containers) if (!this.containers.has(s)) throw new Error(`No such file or directory (set ${s})`);
    for (const name of [...chains, ...containers]) this.ref(name, 1);
    undo.push(() => {
      for (const name of [...chains, ...containers]) this.ref(name, -1);
    });
  }

  private release(text: string, undo: Array<() => void>): void {
    const { chains, containers } = references(text);
    for (const name of [...chains, ...containers]) this.ref(name, -1);
    undo.push(() => {
      for (const name of [...chains, ...containers]) this.ref(name, 1);
    });
  }

  private apply(line: string, undo: Array<() => void>): void {
    const words = line.split(' ', 5);
    const [verb, kind, family, table] = words;
    if (family !== this.family || table !== TABLE_NAME) throw new Error(`not this table`);
    const afterTable = `${verb} ${kind} ${this.prefix} `;
    const rest = line.length > afterTable.length ? line.slice(afterTable.length) : '';
    if (kind === 'table') return this.applyTable(verb, undo);
    if (!this.exists) throw new Error('No such file or directory (table)');
    const space = rest.indexOf(' ');
    const name = space < 0 ? rest : rest.slice(0, space);
    const tail = space < 0 ? '' : rest.slice(space);
    checkLengths(name, tail);
    switch (kind) {
      case 'chain':
        return this.applyChain(verb, name, tail, undo);
      case 'rule':
        return this.applyRule(verb, name, tail.slice(1), undo);
      case 'set':
      case 'map':
        return this.applyContainer(verb, kind, name, tail, undo);
      case 'element':
        return this.applyElement(verb, name, tail, undo);
      default:
        throw new Error(`unknown object kind ${kind}`);
    }
  }

  private applyTable(verb: string, undo: Array<() => void>): void {
    if (verb === 'add') {
      if (this.exists) return;
      this.exists = true;
      undo.push(() => (this.exists = false));
      return;
    }
    if (verb === 'delete') {
      if (!this.exists) throw new Error('No such file or directory (table)');
      const chains = new Map(this.chains);
      const containers = new Map(this.containers);
      const refs = new Map(this.refs);
      this.deleteTable();
      undo.push(() => {
        this.exists = true;
        for (const [k, v] of chains) this.chains.set(k, v);
        for (const [k, v] of containers) this.containers.set(k, v);
        for (const [k, v] of refs) this.refs.set(k, v);
      });
      return;
    }
    throw new Error(`cannot ${verb} a table`);
  }

  private applyChain(verb: string, name: string, body: string, undo: Array<() => void>): void {
    const chain = this.chains.get(name);
    if (verb === 'add') {
      if (chain) {
        if (body !== '' && chain.body !== body) throw new Error(`chain ${name} exists with other properties`);
        return;
      }
      this.chains.set(name, { body, rules: [] });
      undo.push(() => this.chains.delete(name));
      return;
    }
    if (!chain) throw new Error(`No such file or directory (chain ${name})`);
    if (verb === 'flush') {
      const rules = chain.rules;
      for (const r of rules) this.release(r, undo);
      chain.rules = [];
      undo.push(() => (chain.rules = rules));
      return;
    }
    if (verb === 'delete') {
      if (this.refs.has(name)) throw new Error(`Device or resource busy (chain ${name} is referenced)`);
      for (const r of chain.rules) this.release(r, undo);
      this.chains.delete(name);
      undo.push(() => this.chains.set(name, chain));
      return;
    }
    throw new Error(`cannot ${verb} a chain`);
  }

  private applyRule(verb: string, chainName: string, rule: string, undo: Array<() => void>): void {
    if (verb !== 'add') throw new Error(`cannot ${verb} a rule`);
    const chain = this.chains.get(chainName);
    if (!chain) throw new Error(`No such file or directory (chain ${chainName})`);
    this.hold(rule, undo);
    chain.rules.push(rule);
    undo.push(() => chain.rules.pop());
  }

  private applyContainer(verb: string, kind: 'set' | 'map', name: string, body: string, undo: Array<() => void>): void {
    const existing = this.containers.get(name);
    if (verb === 'add') {
      if (existing) {
        if (existing.kind !== kind || existing.body !== body) throw new Error(`${kind} ${name} exists with other properties`);
        return;
      }
      this.containers.set(name, { kind, body, elements: new Map() });
      undo.push(() => this.containers.delete(name));
      return;
    }
    if (!existing || existing.kind !== kind) throw new Error(`No such file or directory (${kind} ${name})`);
    if (verb === 'flush') {
      const elements = existing.elements;
      for (const e of elements.values()) this.release(elementValue(e), undo);
      existing.elements = new Map();
      undo.push(() => (existing.elements = elements));
      return;
    }
    if (verb === 'delete') {
      if (this.refs.has(name)) throw new Error(`Device or resource busy (${kind} ${name} is referenced)`);
      for (const e of existing.elements.values()) this.release(elementValue(e), undo);
      this.containers.delete(name);
      undo.push(() => this.containers.set(name, existing));
      return;
    }
    throw new Error(`cannot ${verb} a ${kind}`);
  }

  private applyElement(verb: string, containerName: string, tail: string, undo: Array<() => void>): void {
    const container = this.containers.get(containerName);
    if (!container) throw new Error(`No such file or directory (set ${containerName})`);
    if (!tail.startsWith(' { ') || !tail.endsWith(' }')) throw new Error('syntax error in element');
    const body = tail.slice(3, -2);
    const key = elementKey(body);
    const existing = container.elements.get(key);
    if (verb === 'add') {
      if (existing !== undefined) {
        if (elementValue(existing) !== elementValue(body)) throw new Error(`File exists (element ${key})`);
        return;
      }
      if (container.kind === 'map') this.hold(elementValue(body), undo);
      container.elements.set(key, body);
      undo.push(() => container.elements.delete(key));
      return;
    }
    if (verb === 'delete') {
      if (existing === undefined) throw new Error(`No such file or directory (element ${key})`);
      if (container.kind === 'map') this.release(elementValue(existing), undo);
      container.elements.delete(key);
      undo.push(() => container.elements.set(key, existing));
      return;
    }
    throw new Error(`cannot ${verb} an element`);
  }

  /**
   * The table as upstream's fake nft.Dump() prints it: the table, every chain, set and map (each
   * sorted by name) declared first, then every chain's rules, then the elements (sorted by key), one
   * object per line. Loadable with `nft -f` (nothing is referenced before it is declared).
   */
  *dumpLines(): Generator<string> {
    if (!this.exists) return;
    const p = this.prefix;
    yield `add table ${p} { comment ${quoted(TABLE_COMMENT)} ; }`;
    const chains = sorted(this.chains.keys());
    const containerNames = sorted(this.containers.keys());
    const sets = containerNames.filter((n) => this.containers.get(n)!.kind === 'set');
    const maps = containerNames.filter((n) => this.containers.get(n)!.kind === 'map');
    for (const c of chains) yield `add chain ${p} ${c}${this.chains.get(c)!.body}`;
    for (const s of sets) yield `add set ${p} ${s}${this.containers.get(s)!.body}`;
    for (const m of maps) yield `add map ${p} ${m}${this.containers.get(m)!.body}`;
    for (const c of chains) for (const r of this.chains.get(c)!.rules) yield `add rule ${p} ${c} ${r}`;
    for (const n of [...sets, ...maps]) {
      const elements = this.containers.get(n)!.elements;
      for (const k of sorted(elements.keys())) yield `add element ${p} ${n} { ${elements.get(k)!} }`;
    }
  }

  dump(): string {
    let out = '';
    for (const line of this.dumpLines()) out += line + '\n';
    return out;
  }
}
