/*
 * What a backend's --cleanup removes from iptables: its jump rules from the built-in chains and the
 * chains it owns (upstream's iptablesJumpChain / iptablesCleanupChains tables of each proxier).
 */

export type LeftoverTable = 'nat' | 'filter';

/** A jump rule `-A <from> -m comment --comment <comment> -j <to>` in `table`. */
export interface JumpRule {
  readonly table: LeftoverTable;
  readonly from: string;
  readonly to: string;
  readonly comment?: string;
  /** Extra match arguments before the comment, as the rule was written. */
  readonly match?: readonly string[];
}

export interface OwnedChain {
  readonly table: LeftoverTable;
  readonly chain: string;
}
