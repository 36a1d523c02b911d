import type { CommandExecutor, IPFamily } from '@kube-proxy/core';
import { parseIptablesSave, type SavedTables } from './saved-tables.js';

/*
 * Reading a live node's rules for a tracer: iptables-save of each table, from both iptables variants
 * (a node may hold rules in both, e.g. kube-proxy in nft and a leftover of an older one in legacy).
 * Only ever a save: nothing on the host changes. A missing binary or a missing table is not an error.
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
  /** The commands that were run, for a "looked for" message (`iptables-nft-save -t nat`, …). */
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
 * Runs `<variant>-save -t TABLE` for each table and variant; `iptables-save` itself only when neither
 * variant binary exists (iptables before 1.8 has no variants).
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

async function readVariant(
  executor: CommandExecutor,
  variant: IptablesSaveVariant,
  command: string,
  tableNames: readonly string[],
  commands: string[],
): Promise<{ spawned: boolean; result?: IptablesSaveRead }> {
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

/** Rules in chains whose names start with one of `prefixes` (e.g. KUBE-SVC-, KUBE-SEP-), in `table`. */
export function countRulesInChains(tables: SavedTables, table: string, prefixes: readonly string[]): number {
  let count = 0;
  for (const chain of tables.tables.get(table)?.chains.values() ?? []) {
    if (prefixes.some((p) => chain.name.startsWith(p))) count += chain.rules.length;
  }
  return count;
}
