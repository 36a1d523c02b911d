/*
 * The nftables mode's ModeTracer: where a packet goes through the kube-proxy table, whether the table
 * was written by us or by upstream's kube-proxy, read from --dry-run output or from the kernel.
 */
import type { CommandExecutor, IPFamily, KernelObject, ModeTracer, NoRulesFound, PacketTrace, RuleSnapshot, TraceNode, TracePacket } from '@kube-proxy/core';
import { parseNftListing } from './listing-parser.js';
import { isNftSnapshot, nftFamilyOf, type NftSnapshot } from './nft-ruleset.js';
import { kernelObjectsOf } from './kernel-objects.js';
import { traceRuleset } from './packet-trace.js';
import { readLiveTable } from './read-live.js';
import { parseNftScript } from './script-parser.js';

/**
 * Parses either form of the table: an `nft -f` script (`add table …` lines: --dry-run, upstream's
 * dumps) or an `nft list table` listing (`table ip kube-proxy {`). Lines starting with `#` are
 * comments in both (the dry-run's `# sync …` header included).
 */
export function nftSnapshotFromText(text: string, family: IPFamily, source: string): NftSnapshot {
  const nftFamily = nftFamilyOf(family);
  const firstLine = text.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'))?.trim() ?? '';
  const ruleset = firstLine.startsWith('table ') ? parseNftListing(text, nftFamily) : parseNftScript(text, nftFamily);
  return { mode: 'nftables', family, source, ruleset };
}

function nftSnapshot(snapshot: RuleSnapshot): NftSnapshot {
  if (!isNftSnapshot(snapshot)) throw new Error(`not an nftables rule snapshot (mode ${snapshot.mode})`);
  return snapshot;
}

export const nftablesTracer: ModeTracer = {
  mode: 'nftables',
  readLive(executor: CommandExecutor, family: IPFamily): Promise<RuleSnapshot | NoRulesFound> {
    return readLiveTable(executor, family);
  },
  fromDryRun(text: string, family: IPFamily): RuleSnapshot {
    return nftSnapshotFromText(text, family, '--dry-run output');
  },
  trace(snapshot: RuleSnapshot, packet: TracePacket, node: TraceNode): PacketTrace {
    return traceRuleset(nftSnapshot(snapshot).ruleset, packet, node);
  },
  objectsOf(snapshot: RuleSnapshot, service: string): readonly KernelObject[] {
    return kernelObjectsOf(nftSnapshot(snapshot).ruleset, service);
  },
};
