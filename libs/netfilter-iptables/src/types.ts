import type { IPFamily } from '@kube-proxy/core';

/** The iptables tables this backend touches. */
export type Table = 'filter' | 'nat' | 'mangle';

/** Where ensureRule puts a missing rule: `-I` (first) or `-A` (last), as upstream's RulePosition. */
export type RulePosition = '-I' | '-A';

/** One rule as `iptables -C` takes it: its chain and its arguments (argv entries, unquoted). */
export interface RuleSpec {
  readonly chain: string;
  readonly args: readonly string[];
}

export interface RestoreOptions {
  /** `--noflush`: leave chains and tables not named in the payload alone. */
  readonly noFlush: boolean;
  /** `--counters`: keep the `[packets:bytes]` given in the payload. */
  readonly counters: boolean;
  /**
   * The payload writes every chain of its tables (a full sync). iptables-nft then gets a `-S` first
   * in each table, which makes its restore of a big payload linear (see nft-restore-cache-hint.ts).
   */
  readonly wholeTables?: boolean;
}

/**
 * One family's iptables as the proxier uses it: upstream's utiliptables.Interface, reduced to what
 * kube-proxy's iptables mode calls. Implemented by `Iptables` (the host's binaries) and
 * `DryRunIptables` (an in-memory model), so the proxier's code path is the same in both.
 * Failures are thrown as `IptablesError` / `IptablesRestoreError`.
 */
export interface IptablesInterface {
  readonly family: IPFamily;
  /** A short description for logs: `iptables-nft`, `ip6tables-legacy`, `dry-run`. */
  readonly description: string;
  /** `iptables-restore -w 5 [--noflush] [--counters]` with the payload on stdin. */
  restore(payload: string, options: RestoreOptions): Promise<void>;
  /**
   * The same restore with the payload as byte chunks (latin1/ASCII text), written to the tool's
   * stdin in order and never joined. Optional: implementations that keep the payload as text (the
   * dry-run model, test fakes) leave it out and callers fall back to restore(). At 10k services
   * it saves two ~18 MB copies (the joined string and the child's stdin buffer) per full sync.
   */
  restoreChunks?(chunks: readonly Uint8Array[], options: RestoreOptions): Promise<void>;
  /** `iptables-save -t TABLE`: the table in iptables-save form ("" when the table does not exist). */
  saveTable(table: Table): Promise<string>;
  /** Creates the chain if missing. Resolves true when it already existed. */
  ensureChain(table: Table, chain: string): Promise<boolean>;
  /** Checks with `-C`; adds at `position` when missing. Resolves true when the rule already existed. */
  ensureRule(position: RulePosition, table: Table, chain: string, args: readonly string[]): Promise<boolean>;
  /** Deletes the rule when present (checked with `-C` first); absent is not an error. */
  deleteRule(table: Table, chain: string, args: readonly string[]): Promise<void>;
  /** Flushes the chain; fails when it does not exist. */
  flushChain(table: Table, chain: string): Promise<void>;
  /** Deletes the chain; fails when it does not exist, is not empty or is referenced. */
  deleteChain(table: Table, chain: string): Promise<void>;
  /** Whether the chain exists. Throws when that cannot be told (lock contention, missing binary). */
  chainExists(table: Table, chain: string): Promise<boolean>;
  /**
   * Those of `rules` (all in `table`) that the table does not hold, in their given order; [] when
   * every one is there. `iptables -C` semantics: the kernel's canonical form is compared, and a rule
   * whose chain or jump target does not exist is missing. Meant for flush detection: one process
   * checks them all (`iptables-restore` of `-C` lines), each missing rule costs one more. Throws when
   * that cannot be told (lock contention, missing binary, a rule iptables cannot parse).
   */
  missingRules(table: Table, rules: readonly RuleSpec[]): Promise<RuleSpec[]>;
}
