/**
 * The nat and filter tables of a live node for a tracer, read-only: iptables-save of both variants
 * (legacy and nft), keeping the one whose nat table holds KUBE-SERVICES (a node may hold leftovers
 * of another kube-proxy in the other variant). `iptables-save` itself only when neither variant's
 * binary exists (iptables before 1.8). A missing binary or table is not an error: the tables are empty.
 */
import type { CommandExecutor, IPFamily } from '@kube-proxy/core';
import { parseIptablesSave, savedChain, type SavedTables } from '@kube-proxy/netfilter-iptables';

const SAVE_TIMEOUT_MS = 120_000;

export interface LiveTables {
  readonly tables: SavedTables;
  /** The command that printed them (`iptables-nft-save`), or undefined when none did. */
  readonly command: string | undefined;
}

async function saveOf(executor: CommandExecutor, command: string): Promise<{ spawned: boolean; text: string }> {
  const texts: string[] = [];
  for (const table of ['nat', 'filter']) {
    const r = await executor.run(command, ['-t', table], { timeoutMs: SAVE_TIMEOUT_MS });
    if (r.spawnError !== undefined) return { spawned: false, text: '' };
    if (r.exitCode === 0 && r.stdout.includes(`*${table}`)) texts.push(r.stdout);
  }
  return { spawned: true, text: texts.join('\n') };
}

export async function readLiveTables(executor: CommandExecutor, family: IPFamily, serviceChain = 'KUBE-SERVICES'): Promise<LiveTables> {
  const prefix = family === 'IPv6' ? 'ip6tables' : 'iptables';
  const found: LiveTables[] = [];
  let anySpawned = false;
  for (const command of [`${prefix}-nft-save`, `${prefix}-legacy-save`]) {
    const read = await saveOf(executor, command);
    anySpawned ||= read.spawned;
    if (read.text !== '') found.push({ tables: parseIptablesSave(read.text), command });
  }
  if (!anySpawned) {
    const read = await saveOf(executor, `${prefix}-save`);
    if (read.text !== '') found.push({ tables: parseIptablesSave(read.text), command: `${prefix}-save` });
  }
  const holding = found.find((f) => savedChain(f.tables, 'nat', serviceChain) !== undefined);
  return holding ?? found[0] ?? { tables: parseIptablesSave(''), command: undefined };
}
