import type { IPAddress, TracePacket } from '@kube-proxy/core';
import { cidrContains, isLoopbackIP } from '@kube-proxy/core';
import type { AddressMatch, PortRange, RuleMatch, SavedRule } from './saved-rule.js';
import type { IptablesTraceOptions } from './trace-types.js';

/** The packet as a rule sees it at one point of the trace (destination after DNAT, current mark). */
export interface PacketView {
  readonly packet: TracePacket;
  /** Lower-case, as iptables writes it. */
  readonly protocol: string;
  readonly source: IPAddress;
  readonly sourceIP: string;
  destination: IPAddress;
  destIP: string;
  destPort: number;
  /** Undefined for a locally generated packet, or when the caller did not say. */
  readonly inInterface?: string;
  mark: number;
  /** A DNAT (or REDIRECT) was applied: conntrack's virtual state DNAT. */
  dnatted: boolean;
  readonly localIPs: ReadonlySet<string>;
  readonly options: IptablesTraceOptions;
}

/** `match`: every match holds; `no`: one does not; `not-understood`: the known ones hold, but not all are known. */
export type MatchResult = 'match' | 'no' | 'not-understood';

/** Whether the rule's matches hold for the packet (a statistic match holds: every branch is visited). */
export function ruleMatches(rule: SavedRule, view: PacketView): MatchResult {
  for (const m of rule.matches) {
    if (!matchHolds(m, view)) return 'no';
  }
  return rule.unknown.length > 0 ? 'not-understood' : 'match';
}

function matchHolds(m: RuleMatch, view: PacketView): boolean {
  switch (m.kind) {
    case 'source':
    case 'destination':
      return addressHolds(m, m.kind === 'source' ? view.source : view.destination);
    case 'protocol':
      return m.negated !== (m.protocol === 'all' || m.protocol === view.protocol);
    case 'dport':
      return m.negated !== inRanges(m.ranges, view.destPort);
    case 'sport':
      // Without a source port nothing is known about it: neither form matches.
      return view.packet.sourcePort !== undefined && m.negated !== inRanges(m.ranges, view.packet.sourcePort);
    case 'in-interface':
      return m.negated !== (view.inInterface !== undefined && interfaceMatches(m.name, view.inInterface));
    case 'out-interface':
      // The output interface is the route's, which the tracer does not know: only `! -o` holds.
      return m.negated;
    case 'src-type':
    case 'dst-type':
      return m.negated !== addressTypeHolds(m.types, m.kind === 'src-type' ? view.sourceIP : view.destIP, view);
    case 'statistic':
      return true;
    case 'history':
      // Earlier packets are unknown: a check of them never holds (upstream's tracer does the same).
      return false;
    case 'mark':
      return m.negated !== ((view.mark & m.mask) >>> 0 === m.value);
    case 'ctstate':
      return m.negated !== m.states.some((s) => s === 'NEW' || (s === 'DNAT' && view.dnatted));
    case 'set':
      return view.options.matchSet?.(m.set, m.flags, m.negated, view.packet) ?? false;
    case 'physdev':
      // The packet is routed, not bridged: physdev matches hold only negated.
      return m.negated;
  }
}

function addressHolds(m: AddressMatch, address: IPAddress): boolean {
  let holds: boolean;
  if (m.cidr) holds = cidrContains(m.cidr, address);
  else if (m.ip) holds = sameAddress(m.ip, address);
  else return false;
  return m.negated !== holds;
}

function sameAddress(a: IPAddress, b: IPAddress): boolean {
  if (a.bytes.length !== b.bytes.length) return false;
  for (let i = 0; i < a.bytes.length; i++) if (a.bytes[i] !== b.bytes[i]) return false;
  return true;
}

function inRanges(ranges: readonly PortRange[], port: number): boolean {
  return ranges.some(([lo, hi]) => port >= lo && port <= hi);
}

/** `eth0`, or `veth+` (a prefix). */
export function interfaceMatches(pattern: string, name: string): boolean {
  return pattern.endsWith('+') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

/** `-m addrtype`: LOCAL for the node's addresses and loopback, MULTICAST, else UNICAST. */
function addressTypeHolds(types: readonly string[], ip: string, view: PacketView): boolean {
  return types.includes(addressType(ip, view));
}

function addressType(ip: string, view: PacketView): string {
  if (view.localIPs.has(ip) || isLoopbackIP(ip)) return 'LOCAL';
  if (cidrContains('224.0.0.0/4', ip) || cidrContains('ff00::/8', ip)) return 'MULTICAST';
  return 'UNICAST';
}
