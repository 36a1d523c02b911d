/**
 * The desired state's ipsets looked up by upstream role, for the iptables writers: a set's kernel
 * name for the family (`KUBE-6-…` for IPv6), its comment, and whether it has entries (upstream
 * writes most set-match rules only for non-empty sets: ipsetList[…].isEmpty()).
 */
import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { ipsetCatalogue, type IpsetDefinition, type IpsetRole } from '../state/ipset-catalogue.js';
import type { DesiredIpvsState } from '../state/ipvs-state.js';

const NO_ENTRIES: readonly string[] = [];

export class IpsetView {
  private readonly byRole = new Map<IpsetRole, { readonly set: IpsetDefinition; readonly entries: readonly string[] }>();

  constructor(state: DesiredIpvsState) {
    const entries = new Map<IpsetRole, readonly string[]>();
    for (const s of state.ipsets) entries.set(s.set.role, s.entries);
    // Names and comments come from the catalogue (constants), never from the state object; a state
    // whose set does not match its family's catalogue is refused.
    const catalogue = ipsetCatalogue(state.family);
    for (const s of state.ipsets) {
      const known = catalogue.find((c) => c.role === s.set.role);
      if (known === undefined || known.name !== s.set.name || s.set.family !== state.family) {
        throw new UnsafeRestoreTextError(`ipvs state of ${state.family} holds the set ${JSON.stringify(String(s.set.name).slice(0, 40))}, which is not in its catalogue`);
      }
    }
    // A state always lists the whole catalogue; a set it does not list is empty.
    for (const set of catalogue) this.byRole.set(set.role, { set, entries: entries.get(set.role) ?? NO_ENTRIES });
  }

  name(role: IpsetRole): string {
    return this.get(role).set.name;
  }

  /** Upstream's IPSet.getComment(): the set's comment (quoted by the line writer). */
  comment(role: IpsetRole): string {
    return this.get(role).set.comment;
  }

  isEmpty(role: IpsetRole): boolean {
    return this.get(role).entries.length === 0;
  }

  entries(role: IpsetRole): readonly string[] {
    return this.get(role).entries;
  }

  private get(role: IpsetRole): { readonly set: IpsetDefinition; readonly entries: readonly string[] } {
    return this.byRole.get(role) as { readonly set: IpsetDefinition; readonly entries: readonly string[] };
  }
}
