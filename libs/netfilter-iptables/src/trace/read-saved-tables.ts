import type { CommandExecutor, IPFamily } from '@kube-proxy/core';
import { cutSavedTableSections } from './saved-table-sections.js';
import { parseIptablesSave, type SavedTables } from './saved-tables.js';

/*
 * Reading a live node's rules for a tracer: iptables-save of each table, from both iptables variants
 * (a node may hold rules in both, e.g. kube-proxy in nft and a leftover of an older one in legacy).
 * Only ever a save: nothing on the host changes. A missing binary or a missing table is not an error.
 *
 * How each variant is asked differs, by what a save costs in the kernel:
 * - iptables-nft-save: every run fetches the whole nftables ruleset from the kernel, whatever `-t` says
 *   (`-t` only filters what it prints), so two `-t` runs cost two whole fetches (measured at 10k
 *   services: the tracer at 2-5x one plain save). It runs once without `-t`, and the wanted tables'
 *   sections are cut out of the text before parsing, so the tables nobody asked for (mangle, raw,
 *   security) cost a string search. (A table the kernel lacks is then absent, where `-t` printed it
 *   with empty built-in chains: the same for a walk, which finds no rule either way.)
 * - iptables-legacy-save: the kernel hands over one table per request, and a save without `-t` copies
 *   out and prints every loaded table (/proc/net/ip_tables_names); per table it copies only what is
 *   wanted, for one more process start. It keeps `-t TABLE`.
 * - a plain iptables-save (only when neither variant binary exists) may be either kind; it runs once
 *   like nft: right for nft, and for legacy it costs the (small) other tables against a process start.
 */

export type IptablesSaveVariant = 'legacy' | 'nft' | 'default';

export interface IptablesSaveRead {
  readonly variant: IptablesSaveVariant;
  /** The binary that printed it, e.g. `iptables-nft-save`. */
  readonly command: string;
  /** The tables it printed (only those it could). */
  readonly tableNames: readonly string[];
  readonly tables: SavedTables;
}

export interface IptablesSaveReadResult {
  /** Every variant that printed at least one table. */
  readonly reads: readonly IptablesSaveRead[];
  /** The commands that were run, for a "looked for" message (`iptables-legacy-save -t nat`, `iptables-nft-save`, …). */
  readonly commands: readonly string[];
}

const SAVE_TIMEOUT_MS = 120_000;

interface SaveBinary {
  readonly variant: IptablesSaveVariant;
  readonly command: string;
  /** Whether it runs once per table with `-t` (legacy) or once for every table (nft, default). */
  readonly perTable: boolean;
}

function binaries(family: IPFamily): SaveBinary[] {
  const prefix = family === 'IPv6' ? 'ip6tables' : 'iptables';
  return [
    { variant: 'legacy', command: `${prefix}-legacy-save`, perTable: true },
    { variant: 'nft', command: `${prefix}-nft-save`, perTable: false },
  ];
}

/**
 * Runs `<variant>-legacy-save -t TABLE` for each table and `<variant>-nft-save` once; `iptables-save`
 * itself (once) only when neither variant binary exists (iptables before 1.8 has no variants).
 * `commands` lists the command lines as run.
 */
export async function readIptablesSaveVariants(
  executor: CommandExecutor,
  family: IPFamily,
  tableNames: readonly string[] = ['nat', 'filter'],
): Promise<IptablesSaveReadResult> {
  const commands: string[] = [];
  const reads: IptablesSaveRead[] = [];
  let anyBinary = false;
  for (const binary of binaries(family)) {
    const read = await readVariant(executor, binary, tableNames, commands);
    anyBinary ||= read.spawned;
    if (read.result) reads.push(read.result);
  }
  if (!anyBinary) {
    const command = family === 'IPv6' ? 'ip6tables-save' : 'iptables-save';
    const read = await readVariant(executor, { variant: 'default', command, perTable: false }, tableNames, commands);
    if (read.result) reads.push(read.result);
  }
  return { reads, commands };
}

type VariantRead = { spawned: boolean; result?: IptablesSaveRead };

async function readVariant(
  executor: CommandExecutor,
  binary: SaveBinary,
  tableNames: readonly string[],
  commands: string[],
): Promise<VariantRead> {
  return binary.perTable ? readPerTable(executor, binary, tableNames, commands) : readWhole(executor, binary, tableNames, commands);
}

/** `<command> -t TABLE` for each table. */
async function readPerTable(executor: CommandExecutor, binary: SaveBinary, tableNames: readonly string[], commands: string[]): Promise<VariantRead> {
  const { variant, command } = binary;
  const texts: string[] = [];
  const printed: string[] = [];
  let spawned = false;
  for (const table of tableNames) {
    commands.push(`${command} -t ${table}`);
    const result = await executor.run(command, ['-t', table], { timeoutMs: SAVE_TIMEOUT_MS });
    if (result.spawnError !== undefined) return { spawned: false };
    spawned = true;
    if (result.exitCode !== 0 || !result.stdout.includes(`*${table}`)) continue;
    texts.push(result.stdout);
    printed.push(table);
  }
  if (printed.length === 0) return { spawned };
  return { spawned, result: { variant, command, tableNames: printed, tables: parseIptablesSave(texts.join('\n')) } };
}

/** `<command>` once, keeping only the sections of `tableNames`. */
async function readWhole(executor: CommandExecutor, binary: SaveBinary, tableNames: readonly string[], commands: string[]): Promise<VariantRead> {
  const { variant, command } = binary;
  commands.push(command);
  const result = await executor.run(command, [], { timeoutMs: SAVE_TIMEOUT_MS });
  if (result.spawnError !== undefined) return { spawned: false };
  // A failed save may have stopped half-way through a table: nothing of it is trusted.
  if (result.exitCode !== 0) return { spawned: true };
  const sections = cutSavedTableSections(result.stdout, tableNames);
  if (sections.tableNames.length === 0) return { spawned: true };
  return { spawned: true, result: { variant, command, tableNames: sections.tableNames, tables: parseIptablesSave(sections.text) } };
}

/** Rules in chains whose names start with one of `prefixes` (e.g. KUBE-SVC-, KUBE-SEP-), in `table`. */
export function countRulesInChains(tables: SavedTables, table: string, prefixes: readonly string[]): number {
  let count = 0;
  for (const chain of tables.tables.get(table)?.chains.values() ?? []) {
    if (prefixes.some((p) => chain.name.startsWith(p))) count += chain.rules.length;
  }
  return count;
}
