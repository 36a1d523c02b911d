/**
 * The command line: the flag table, parsing, upstream's flag-versus-file precedence, and --help.
 * Each concern lives in its own file; this module gathers them under one name.
 */
export * from './flag-table.js';
export * from './flag-parse.js';
export * from './flag-apply.js';
export * from './flag-help.js';
