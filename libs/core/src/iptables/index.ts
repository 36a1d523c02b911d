/*
 * The host's iptables for the backends that program it (iptables mode renders whole rulesets,
 * userspace mode only capture rules): upstream's pkg/util/iptables, shared here because backends
 * cannot import each other.
 */
export { Iptables, iptablesBinaries, WAIT_ARGS } from './iptables-runner.js';
export type { IptablesBinaries, IptablesOptions } from './iptables-runner.js';
export type { IptablesInterface, RestoreOptions, RulePosition, Table } from './types.js';
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
