import type { IPFamily, RuleSnapshot } from '@kube-proxy/core';
import type { SavedTables } from '@kube-proxy/netfilter-iptables';

/** The iptables mode's RuleSnapshot: the nat and filter tables, parsed. */
export interface IptablesSnapshot extends RuleSnapshot {
  readonly mode: 'iptables';
  readonly tables: SavedTables;
}

export function iptablesSnapshot(tables: SavedTables, family: IPFamily, source: string): IptablesSnapshot {
  return { mode: 'iptables', family, source, tables };
}

/** The snapshot as this mode's, or an error naming the mode that made it. */
export function asIptablesSnapshot(snapshot: RuleSnapshot): IptablesSnapshot {
  const tables = (snapshot as Partial<IptablesSnapshot>).tables;
  if (snapshot.mode !== 'iptables' || tables === undefined) {
    throw new Error(`the iptables tracer cannot read a ${snapshot.mode} snapshot (${snapshot.source})`);
  }
  return snapshot as IptablesSnapshot;
}
