import type { NftTransaction } from '../nft/nft-transaction.js';
import type { KernelTableState } from './kernel-table-state.js';

/** A transaction nft refused. `line` is the 1-based line of the transaction it names, when it names one. */
export class NftRunError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

/**
 * The kube-proxy table of one family as the proxier sees it: the host's nft (`nft -f -`), or the
 * in-memory table of --dry-run and the unit tests (MemoryNft).
 */
export interface NftInterface {
  readonly description: string;
  /** Applies `tx` atomically; throws NftRunError when nft refuses it (then nothing changed). */
  run(tx: NftTransaction): Promise<void>;
  /** Whether the kube-proxy table of this family exists (someone may have deleted it). */
  tableExists(): Promise<boolean>;
  /** The chains, sets and shared elements of the existing table (a restart takes it over), null if none. */
  readState(): Promise<KernelTableState | null>;
}
