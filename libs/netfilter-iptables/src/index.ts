/**
 * Public API of @kube-proxy/netfilter-iptables: the host's iptables for the backends that program it
 * (iptables mode renders whole rulesets, IPVS mode its iptables skeleton, userspace mode only capture
 * rules), as upstream's pkg/util/iptables. Test fakes are behind `@kube-proxy/netfilter-iptables/testing`.
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

// --cleanup of a backend's jumps and chains (one iptables-save and one iptables-restore per table).
export { cleanupIptablesLeftovers, cleanupIptablesLeftoversInEveryVariant } from './leftovers/cleanup-leftovers.js';
export { planLeftoverTable, type LeftoverPlan } from './leftovers/plan-leftover-table.js';
export type { JumpRule, LeftoverTable, OwnedChain } from './leftovers/leftover-rules.js';

// Upstream's iptables metrics, defined through core's MetricsRegistry by the backends that write them.
export { IPTABLES_PARTIAL_RESTORE_FAILURES, IPTABLES_RESTORE_FAILURES, IPTABLES_RULES_LAST, IPTABLES_RULES_TOTAL } from './metrics.js';

// Packet tracing over iptables-save text (iptables mode, and the iptables parts of IPVS and userspace modes).
export { parseIptablesSave, savedChain } from './trace/saved-tables.js';
export type { SavedChain, SavedTable, SavedTables } from './trace/saved-tables.js';
export { parseSavedRule } from './trace/saved-rule.js';
export type { RuleMatch, RuleTarget, SavedRule } from './trace/saved-rule.js';
export { traceIptables } from './trace/trace-iptables.js';
export { parseDnatDestination } from './trace/chain-walker.js';
export type {
  IptablesDnatChoice,
  IptablesRuleRef,
  IptablesStepAction,
  IptablesTrace,
  IptablesTraceOptions,
  IptablesTraceStep,
  IptablesVerdict,
} from './trace/trace-types.js';
export { countRulesInChains, readIptablesSaveVariants } from './trace/read-saved-tables.js';
export type { IptablesSaveRead, IptablesSaveReadResult, IptablesSaveVariant } from './trace/read-saved-tables.js';
export { servicePortOfComment } from './trace/service-comment.js';
