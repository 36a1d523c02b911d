import {
  chainBody,
  elementBody,
  mapBody,
  setBody,
  TABLE_COMMENT,
  TABLE_NAME,
  quoted,
  type ChainDecl,
  type ElementSpec,
  type MapDecl,
  type NftFamily,
  type SetDecl,
} from './nft-objects.js';

/** What one transaction does, by verb and object kind (upstream's tests count them). */
export interface OperationCounts {
  [verbAndKind: string]: number;
}

/**
 * One `nft -f -` transaction on the kube-proxy table of one family, as lines. nft applies a file
 * as a single atomic batch: either every line takes effect or none does.
 */
export class NftTransaction {
  readonly lines: string[] = [];
  private readonly prefix: string;
  /**
   * The service port (its key) each line was written for, where one was: when nft refuses the
   * transaction it names a line, and this names the Service it failed on (see ownedBy).
   */
  private readonly lineOwners: Array<string | undefined> = [];
  private owner: string | undefined;

  constructor(readonly family: NftFamily) {
    this.prefix = `${family} ${TABLE_NAME}`;
  }

  get size(): number {
    return this.lines.length;
  }

  /** Lines written from now on belong to the service port `owner` (undefined: to none, e.g. the skeleton). */
  ownedBy(owner: string | undefined): this {
    this.owner = owner;
    return this;
  }

  /** The service port the 1-based `line` was written for, if any. */
  ownerOfLine(line: number): string | undefined {
    return this.lineOwners[line - 1];
  }

  private push(line: string): void {
    this.lines.push(line);
    this.lineOwners.push(this.owner);
  }

  addTable(): this {
    this.push(`add table ${this.prefix} { comment ${quoted(TABLE_COMMENT)} ; }`);
    return this;
  }

  deleteTable(): this {
    this.push(`delete table ${this.prefix}`);
    return this;
  }

  addChain(decl: ChainDecl | string): this {
    if (typeof decl === 'string') this.push(`add chain ${this.prefix} ${decl}`);
    else this.push(`add chain ${this.prefix} ${decl.name}${chainBody(decl)}`);
    return this;
  }

  flushChain(name: string): this {
    this.push(`flush chain ${this.prefix} ${name}`);
    return this;
  }

  deleteChain(name: string): this {
    this.push(`delete chain ${this.prefix} ${name}`);
    return this;
  }

  addSet(decl: SetDecl): this {
    this.push(`add set ${this.prefix} ${decl.name}${setBody(decl)}`);
    return this;
  }

  flushSet(name: string): this {
    this.push(`flush set ${this.prefix} ${name}`);
    return this;
  }

  deleteSet(name: string): this {
    this.push(`delete set ${this.prefix} ${name}`);
    return this;
  }

  addMap(decl: MapDecl): this {
    this.push(`add map ${this.prefix} ${decl.name}${mapBody(decl)}`);
    return this;
  }

  flushMap(name: string): this {
    this.push(`flush map ${this.prefix} ${name}`);
    return this;
  }

  /** `rule` is the rule text with its comment already attached (ruleText). */
  addRule(chain: string, rule: string): this {
    this.push(`add rule ${this.prefix} ${chain} ${rule}`);
    return this;
  }

  addElement(container: string, element: ElementSpec): this {
    this.push(`add element ${this.prefix} ${container} { ${elementBody(element)} }`);
    return this;
  }

  deleteElement(container: string, key: string): this {
    this.push(`delete element ${this.prefix} ${container} { ${key} }`);
    return this;
  }

  /** The transaction as nft input, in pieces of about `pieceBytes` (no joined copy of a large batch). */
  *pieces(pieceBytes = 256 * 1024): Generator<string> {
    let piece = '';
    for (const line of this.lines) {
      piece += line + '\n';
      if (piece.length >= pieceBytes) {
        yield piece;
        piece = '';
      }
    }
    if (piece !== '') yield piece;
  }

  toString(): string {
    return this.lines.length === 0 ? '' : this.lines.join('\n') + '\n';
  }

  /** Operations by `verb kind` (e.g. `add rule`, `delete element`). */
  counts(): OperationCounts {
    const counts: OperationCounts = {};
    for (const line of this.lines) {
      const second = line.indexOf(' ', line.indexOf(' ') + 1);
      const key = line.slice(0, second);
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  }
}
