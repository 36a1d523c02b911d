import type { CommandExecutor, IPFamily } from '@kube-proxy/core';
import { cutSavedTableSections } from './saved-table-sections.js';
import { parseIptablesSave, type SavedTables } from './saved-tables.js';

/*
 * Reading a live node's rules for a tracer: the iptables-save of each iptables variant (a node may hold
 * rules in both, e.g. kube-proxy in nft and a leftover of an older one in legacy), the asked tables'
 * sections of it. Only ever a save: nothing on the host changes. A missing binary or a missing table is
 * not an error.
 *
 * Each save runs once, without `-t`, and the wanted tables' sections are cut out of its text before
 * parsing (the rest, mangle, raw, security, costs a string search):
 * - iptables-nft-save fetches the whole nftables ruleset from the kernel on every run, whatever `-t`
 *   says (`-t` only filters what it prints), so `-t nat` then `-t filter` cost two whole fetches
 *   (measured at 10k services: the tracer at 2-5x one plain save).
 * - iptables-legacy-save without `-t` reads only the tables already loaded (/proc/net/ip_tables_names);
 *   `-t nat` on a node without a legacy nat table creates one (the kernel loads it on request), so a
 *   read would change the node (and iptables-nft would warn of legacy tables from then on). Cost: one
 *   save of every table took no longer than `-t nat` plus `-t filter` (10k services x 5 endpoints,
 *   10.5 MB: 0.43 s against 0.46 s, median of 7), the other tables being small.
 * - a plain iptables-save (only when neither variant binary exists) is one of the two.
 * A table the node lacks is then absent, where `-t` printed it with empty built-in chains: the same for
 * a walk, which finds no rule either way.
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
  /** The commands that were run, for a "looked for" message (`iptables-legacy-save`, `iptables-nft-save`, …). */
  readonly commands: readonly string[];
}

const SAVE_TIMEOUT_MS = 120_000;

function binaries(family: IPFamily): { variant: IptablesSaveVariant; command: string }[] {
  const prefix = family === 'IPv6' ? 'ip6tables' : 'iptables';
  return [
    { variant: 'legacy', command: `${prefix}-legacy-save` },
    { variant: 'nft', command: `${prefix}-nft-save` },
  ];
}

/**
 * Runs `<variant>-save` (no `-t`) of each variant, keeping `tableNames`; `iptables-save` itself only
 * when neither variant binary exists (iptables before 1.8 has no variants). `commands` lists the
 * command lines as run.
 */
export async function readIptablesSaveVariants(
  executor: CommandExecutor,
  family: IPFamily,
  tableNames: readonly string[] = ['nat', 'filter'],
): Promise<IptablesSaveReadResult> {
  const commands: string[] = [];
  const reads: IptablesSaveRead[] = [];
  let anyBinary = false;
  for (const { variant, command } of binaries(family)) {
    const read = await readVariant(executor, variant, command, tableNames, commands);
    anyBinary ||= read.spawned;
    if (read.result) reads.push(read.result);
  }
  if (!anyBinary) {
    const command = family === 'IPv6' ? 'ip6tables-save' : 'iptables-save';
    const read = await readVariant(executor, 'default', command, tableNames, commands);
    if (read.result) reads.push(read.result);
  }
  return { reads, commands };
}

/** `command` once, keeping only the sections of `tableNames`. */
async function readVariant(
  executor: CommandExecutor,
  variant: IptablesSaveVariant,
  command: string,
  tableNames: readonly string[],
  commands: string[],
): Promise<{ spawned: boolean; result?: IptablesSaveRead }> {
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
