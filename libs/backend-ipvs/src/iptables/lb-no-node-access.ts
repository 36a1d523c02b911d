/**
 * Upstream's lbNoNodeAccessIPPortProtocolEntries (kubernetes#119656): a load-balancer IP:port with
 * loadBalancerSourceRanges that do not contain the node's own IP. With IPVS the node reaches its
 * LB IP locally (the address is on kube-ipvs0), so the source ranges alone cannot keep the node
 * out; upstream adds a filter KUBE-IPVS-OUT-FILTER DROP for those, matching the IPVS connection
 * (`-m ipvs --vaddr IP --vproto P --vport N`) with the LB IP as source.
 *
 * The desired state already says which these are, without a list of its own: every
 * KUBE-LOAD-BALANCER-FW entry (`IP,proto:port`) gets a KUBE-LOAD-BALANCER-SOURCE-IP entry
 * (`IP,proto:port,IP`) exactly when a range contains the node IP (upstream's allowFromNode), so the
 * FW entries without one are upstream's list. Sorted, as the state (upstream walks a map).
 */
import type { IPFamily } from '@kube-proxy/core';
import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { assertStateIP, assertStatePort } from '../state/state-guards.js';
import type { IpsetView } from './ipset-view.js';

export interface LbNoNodeAccessEntry {
  readonly ip: string;
  readonly protocol: 'tcp' | 'udp' | 'sctp';
  readonly port: number;
}

const IP_PORT_ENTRY = /^([^,]+),(tcp|udp|sctp):([0-9]{1,5})$/;

/** Parses a hash:ip,port entry back into its parts, refusing anything but canonical text. */
function parseIpPortEntry(entry: string, family: IPFamily): LbNoNodeAccessEntry {
  const m = IP_PORT_ENTRY.exec(entry);
  if (m === null) throw new UnsafeRestoreTextError(`ipvs state: ${JSON.stringify(entry.slice(0, 80))} is not an IP,proto:port entry`);
  const [, ip, protocol, portText] = m as unknown as [string, string, LbNoNodeAccessEntry['protocol'], string];
  assertStateIP(ip, family, 'load-balancer IP');
  const port = Number(portText);
  assertStatePort(port, 'load-balancer port');
  return { ip, protocol, port };
}

export function lbNoNodeAccessEntries(sets: IpsetView, family: IPFamily): LbNoNodeAccessEntry[] {
  const allowed = new Set(sets.entries('KUBE-LOAD-BALANCER-SOURCE-IP'));
  const out: LbNoNodeAccessEntry[] = [];
  for (const entry of sets.entries('KUBE-LOAD-BALANCER-FW')) {
    const parsed = parseIpPortEntry(entry, family);
    if (!allowed.has(`${entry},${parsed.ip}`)) out.push(parsed);
  }
  return out;
}
