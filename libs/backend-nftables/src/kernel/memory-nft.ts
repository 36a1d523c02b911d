import { MemoryNftTable, NftTransactionError } from '../nft/memory-table.js';
import type { NftFamily } from '../nft/nft-objects.js';
import type { NftTransaction } from '../nft/nft-transaction.js';
import type { KernelChain, KernelTableState } from './kernel-table-state.js';
import { NftRunError, type NftInterface } from './nft-interface.js';

const BASE_BODY = /type (\S+) hook (\S+) priority (-?\d+) ;/;
const TIMEOUT = /timeout (\d+)s ;/;

/** The in-memory table behind --dry-run and the unit tests; keeps every transaction it ran for inspection. */
export class MemoryNft implements NftInterface {
  readonly description = 'in-memory nftables table (dry run)';
  readonly table: MemoryNftTable;
  /** Every transaction applied, oldest first (tests read the last ones). */
  readonly transactions: NftTransaction[] = [];
  /** Make the next run() fail (tests of failure handling). */
  failNext: string | null = null;
  /**
   * Refuse, in every run() until unset, a line this returns an error for, naming its line as nft
   * does (`/dev/stdin:LINE:…: Error: …`): a kernel or nft that rejects one service's text.
   */
  refuseLine: ((line: string) => string | undefined) | null = null;
  keepTransactions: boolean;

  constructor(family: NftFamily, options: { keepTransactions?: boolean } = {}) {
    this.table = new MemoryNftTable(family);
    this.keepTransactions = options.keepTransactions ?? false;
  }

  async run(tx: NftTransaction): Promise<void> {
    // As the host's: an empty transaction starts no nft.
    if (tx.size === 0) return;
    if (this.failNext !== null) {
      const why = this.failNext;
      this.failNext = null;
      throw new NftRunError(why);
    }
    if (this.refuseLine !== null) {
      for (let i = 0; i < tx.lines.length; i++) {
        const why = this.refuseLine(tx.lines[i]);
        if (why !== undefined) throw new NftRunError(`/dev/stdin:${i + 1}:1-${tx.lines[i].length}: Error: ${why}`, i + 1);
      }
    }
    try {
      this.table.run(tx.lines);
    } catch (err) {
      if (err instanceof NftTransactionError) throw new NftRunError(err.message, err.line);
      throw err;
    }
    if (this.keepTransactions) this.transactions.push(tx);
  }

  async tableExists(): Promise<boolean> {
    return this.table.tableExists;
  }

  async readState(): Promise<KernelTableState | null> {
    const t = this.table;
    if (!t.tableExists) return null;
    const chains: KernelChain[] = t.chainNames().map((name) => {
      const m = BASE_BODY.exec(t.chainBody(name) ?? '');
      return m ? { name, base: { type: m[1], hook: m[2], priority: Number(m[3]) } } : { name };
    });
    const sets = new Map<string, number>();
    for (const name of t.setNames()) sets.set(name, Number(TIMEOUT.exec(t.containerBody(name) ?? '')?.[1] ?? 0));
    const elements = new Map<string, ReadonlyMap<string, string>>();
    for (const name of t.containerNames()) elements.set(name, new Map(t.elementsOf(name)));
    const rules = new Map<string, readonly string[]>();
    for (const name of t.chainNames()) rules.set(name, [...(t.rulesOf(name) ?? [])]);
    return { chains, sets, elements, rules };
  }
}
