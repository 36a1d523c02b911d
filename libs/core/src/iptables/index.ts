/*
 * The host's iptables for the backends that program it (iptables mode renders whole rulesets,
 * userspace mode only capture rules): upstream's pkg/util/iptables, shared here because backends
 * cannot import each other.
 */
export { Iptables, iptablesBinaries, WAIT_ARGS } from './iptables-runner.js';
export { lineBeforeHint, NFT_CACHE_HINT_LINE, withNftCacheHint } from './nft-restore-cache-hint.js';
export type { IptablesBinaries, IptablesOptions } from './iptables-runner.js';
export type { IptablesInterface, RestoreOptions, RulePosition, RuleSpec, Table } from './types.js';
export {
  extractLines,
  IptablesError,
  IptablesRestoreError,
  isNotFoundError,
  isResourceError,
  parseRestoreErrorLine,
} from './errors.js';
export type { PayloadLine } from './errors.js';
export { chainsFromSave, joinArgs, quoteArg, ruleTarget, tokenize } from './rule-text.js';
export {
  describeRule,
  IPTABLES_FLUSH_POLL_MS,
  IPTABLES_FLUSH_SETTLE_MS,
  IPTABLES_FLUSH_TIMEOUT_MS,
  IptablesFlushMonitor,
} from './flush-monitor.js';
export type { IptablesFlushMonitorOptions, TableFlushFinding } from './flush-monitor.js';

// The in-memory iptables behind --dry-run of every backend that writes iptables rules.
export { BUILTIN_CHAINS, InMemoryRestoreError, InMemoryTables, InMemoryTablesError } from './dry-run/in-memory-tables.js';
export type { InMemoryRestoreOptions, InMemoryRule } from './dry-run/in-memory-tables.js';
export { DryRunIptables } from './dry-run/dry-run-iptables.js';

// A local-traffic detector as iptables match arguments (iptables and IPVS mode).
export { localDetectorArgs } from './local-detector-args.js';
export type { LocalDetectorArgs } from './local-detector-args.js';
export { iptablesForRun } from './run-iptables.js';
