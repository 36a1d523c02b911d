/**
 * Reads the packet counts of the localhost reject chains from the kernel, the source of
 * kubeproxy_nftables_localhost_nodeport_rejected_packets_total (upstream reads its named counters
 * at scrape time the same way). One terse JSON listing per chain; a chain that is not there (the
 * table not written yet, or deleted) yields no count, so its series is not reported.
 */
import type { CommandExecutor, Protocol } from '@kube-proxy/core';
import { TABLE_NAME, type NftFamily } from '../nft/nft-objects.js';
import { LOCALHOST_REJECT_PROTOCOLS, localhostRejectChain } from './localhost-names.js';

const LIST_TIMEOUT_MS = 2000;

/** The `counter` statement's packets in `nft -j list chain` output of one chain (summed over its rules). */
export function packetsOfChainListing(json: string): number | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    return undefined;
  }
  const items = (doc as { nftables?: unknown } | null)?.nftables;
  if (!Array.isArray(items)) return undefined;
  let packets: number | undefined;
  for (const item of items) {
    const expr = (item as { rule?: { expr?: unknown } } | null)?.rule?.expr;
    if (!Array.isArray(expr)) continue;
    for (const e of expr) {
      const n = (e as { counter?: { packets?: unknown } } | null)?.counter?.packets;
      if (typeof n === 'number' && Number.isFinite(n)) packets = (packets ?? 0) + n;
    }
  }
  return packets;
}

/** Packets rejected so far per protocol, for the chains that could be read. */
export async function readLocalhostRejected(executor: CommandExecutor, family: NftFamily, binary = 'nft'): Promise<Map<Protocol, number>> {
  const out = new Map<Protocol, number>();
  for (const protocol of LOCALHOST_REJECT_PROTOCOLS) {
    const result = await executor.run(binary, ['-j', 'list', 'chain', family, TABLE_NAME, localhostRejectChain(protocol)], { timeoutMs: LIST_TIMEOUT_MS });
    if (result.exitCode !== 0) continue;
    const packets = packetsOfChainListing(result.stdout);
    if (packets !== undefined) out.set(protocol, packets);
  }
  return out;
}
