/**
 * The batches of one partial IPVS sync, from what the changed service ports touched (the index's
 * IndexChange) and what our last sync applied (AppliedIpvs): set entries that appeared or went
 * away, the touched virtual servers' kernel target (with graceful termination) as an ipvsadm
 * batch, and the VIPs to bind or unbind on kube-ipvs0. Pure but for the connection read, which
 * kernelTarget makes only when a TCP real server is on its way out. The proxier applies these in
 * its usual order; the IPVS benchmark times exactly this step as the change's compute.
 */
import type { IpvsConnections } from '../kernel/ipvs-kernel.js';
import { diffIpset } from '../batch/diff-batches.js';
import { ipsetCatalogue } from '../state/ipset-catalogue.js';
import type { IndexChange, IpvsStateIndex } from '../state/ipvs-state-index.js';
import type { DesiredIpvsState } from '../state/ipvs-state.js';
import type { AppliedIpvs, PartialIpvs } from './applied-ipvs.js';

export interface PartialBatches {
  /** `ipset restore` input ("" when no entry moved). */
  readonly ipset: string;
  /** The ipvsadm batch and the target to commit to the applied view once it went in. */
  readonly ipvs: PartialIpvs;
  /** VIPs to bind and unbind on kube-ipvs0 (sorted). */
  readonly bind: readonly string[];
  readonly unbind: readonly string[];
}

const NONE: readonly string[] = [];

export async function partialBatches(index: IpvsStateIndex, change: IndexChange, applied: AppliedIpvs, excludeCIDRs: readonly string[], connections: () => Promise<IpvsConnections>): Promise<PartialBatches> {
  const sets = (lists: IndexChange['ipsetsBefore']): DesiredIpvsState => ({
    family: index.family,
    virtualServers: [],
    bindAddresses: [],
    ipsets: ipsetCatalogue(index.family).map((set) => ({ set, entries: lists.get(set.role) ?? NONE })),
  });
  const ipset = diffIpset(sets(change.ipsetsBefore), sets(change.ipsetsAfter));
  const ipvs = await applied.partial(change.servers, (k) => index.virtualServer(k), excludeCIDRs, connections);
  return { ipset, ipvs, bind: change.ipsetsAfter.get('KUBE-IPVS-IPS') ?? NONE, unbind: change.ipsetsBefore.get('KUBE-IPVS-IPS') ?? NONE };
}
