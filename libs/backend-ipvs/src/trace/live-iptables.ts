/**
 * The nat and filter tables of a live node for the IPVS tracer, read-only through netfilter-iptables'
 * readIptablesSaveVariants (both variants): the variant whose nat table holds KUBE-SERVICES (a node
 * may hold another kube-proxy's leftovers in the other one), else the first that printed anything.
 */
import type { CommandExecutor, IPFamily } from '@kube-proxy/core';
import { parseIptablesSave, readIptablesSaveVariants, savedChain, type SavedTables } from '@kube-proxy/netfilter-iptables';

export interface LiveTables {
  readonly tables: SavedTables;
  /** The command that printed them (`iptables-nft-save`), or undefined when none did. */
  readonly command: string | undefined;
}

export async function readLiveTables(executor: CommandExecutor, family: IPFamily, serviceChain = 'KUBE-SERVICES'): Promise<LiveTables> {
  const { reads } = await readIptablesSaveVariants(executor, family, ['nat', 'filter']);
  const chosen = reads.find((r) => savedChain(r.tables, 'nat', serviceChain) !== undefined) ?? reads[0];
  return chosen ? { tables: chosen.tables, command: chosen.command } : { tables: parseIptablesSave(''), command: undefined };
}
