/**
 * The command line: the flag table, parsing, upstream's flag-versus-file precedence, and --help.
 * Each concern lives in its own file; this module gathers them under one name.
 */
export { findFlag, findShorthand, type FlagGroup, type FlagSpec, type FlagType, type FlagValue, KUBE_PROXY_FLAGS } from './flag-table.js';
export { type CliOptions, FlagError, type ParsedFlags, parseFlags } from './flag-parse.js';
export { applyFlags } from './flag-apply.js';
export { formatHelp } from './flag-help.js';
