/**
 * What turns one desired state into another, as restore batches: what upstream's syncService /
 * syncEndpoint / syncIPSetEntries do call by call (add, update or delete each virtual server, add
 * or delete each real server, add or delete each set entry), written as one `ipvsadm --restore`
 * batch and one `ipset restore` script so a sync is two process runs however much changed.
 *
 * Order (deterministic, by key): per virtual server in key order, `-D` if it went away, else `-A`
 * and its `-a` lines if it is new, else `-E` if scheduler, flags or timeout changed, then `-d` for
 * real servers that went away, `-e` for weight changes and `-a` for new ones. Per set in catalogue
 * order: `del` lines, then `add` lines, entries sorted. Sets themselves are not created here (the
 * full renderer or the proxier's ensure step does that); both states must be of the same family.
 */
import type { DesiredIpvsState, RealServer, VirtualServer } from '../state/ipvs-state.js';
import { addEntryLine, deleteEntryLine } from './ipset-text.js';
import { addServerLine, addServiceLine, deleteServerLine, deleteServiceLine, editServerLine, editServiceLine } from './ipvsadm-text.js';
import { checkedBatch } from './render-batches.js';

export interface StateDiffBatches {
  /** `ipvsadm --restore` input ("" when nothing changed). */
  readonly ipvsadm: string;
  /** `ipset restore` input ("" when nothing changed). */
  readonly ipset: string;
}

function sameService(a: VirtualServer, b: VirtualServer): boolean {
  return a.scheduler === b.scheduler && a.persistenceTimeout === b.persistenceTimeout && a.flags.join(',') === b.flags.join(',');
}

function byKey<T extends { key: string }>(items: readonly T[]): Map<string, T> {
  return new Map(items.map((i) => [i.key, i]));
}

function sortedUnion(a: Iterable<string>, b: Iterable<string>): string[] {
  return [...new Set([...a, ...b])].sort();
}

function diffRealServers(lines: string[], vs: VirtualServer, before: readonly RealServer[], after: readonly RealServer[]): void {
  const old = byKey(before);
  const now = byKey(after);
  for (const key of sortedUnion(old.keys(), now.keys())) {
    const o = old.get(key);
    const n = now.get(key);
    if (n === undefined) lines.push(deleteServerLine(vs, o as RealServer));
    else if (o === undefined) lines.push(addServerLine(vs, n));
    else if (o.weight !== n.weight) lines.push(editServerLine(vs, n));
  }
}

export function diffIpvsadm(before: DesiredIpvsState, after: DesiredIpvsState): string {
  const old = byKey(before.virtualServers);
  const now = byKey(after.virtualServers);
  const lines: string[] = [];
  for (const key of sortedUnion(old.keys(), now.keys())) {
    const o = old.get(key);
    const n = now.get(key);
    if (n === undefined) {
      lines.push(deleteServiceLine(o as VirtualServer));
    } else if (o === undefined) {
      lines.push(addServiceLine(n));
      for (const rs of n.realServers) lines.push(addServerLine(n, rs));
    } else {
      if (!sameService(o, n)) lines.push(editServiceLine(n));
      diffRealServers(lines, n, o.realServers, n.realServers);
    }
  }
  return checkedBatch(lines);
}

export function diffIpset(before: DesiredIpvsState, after: DesiredIpvsState): string {
  const oldSets = new Map(before.ipsets.map((s) => [s.set.name, new Set(s.entries)]));
  const lines: string[] = [];
  for (const { set, entries } of after.ipsets) {
    const old = oldSets.get(set.name) ?? new Set<string>();
    const now = new Set(entries);
    for (const e of [...old].sort()) if (!now.has(e)) lines.push(deleteEntryLine(set, e));
    for (const e of entries) if (!old.has(e)) lines.push(addEntryLine(set, e));
  }
  return checkedBatch(lines);
}

/** Both batches from `before` to `after` (same family). */
export function diffDesiredStates(before: DesiredIpvsState, after: DesiredIpvsState): StateDiffBatches {
  if (before.family !== after.family) throw new RangeError(`cannot diff an ${before.family} state against an ${after.family} state`);
  return { ipvsadm: diffIpvsadm(before, after), ipset: diffIpset(before, after) };
}
