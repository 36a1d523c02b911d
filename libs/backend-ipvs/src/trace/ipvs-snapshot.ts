/**
 * What the IPVS tracer reads of a node, for one IP family: the virtual servers and their real
 * servers (`ipvsadm --save -n`), the ipsets (`ipset save`), the addresses on kube-ipvs0 and the nat
 * and filter tables (iptables-save). The same four parts are the sections of our IPVS --dry-run
 * block, so a snapshot is built the same way from the host's tools and from --dry-run text.
 * Upstream's IPVS layout is the same as ours rule for rule, so one snapshot type reads both.
 */
import { canonicalIP, type IPFamily, type Protocol, type RuleSnapshot } from '@kube-proxy/core';
import { parseIptablesSave, type SavedTables } from '@kube-proxy/netfilter-iptables';
import { addServerLine, addServiceLine } from '../batch/ipvsadm-text.js';
import { parseIpvsadmSave } from '../kernel/ipvsadm-save.js';
import type { RealServer, VirtualServer } from '../state/ipvs-state.js';
import { IpsetIndex } from './ipset-index.js';

export const IPVS_TRACE_MODE = 'ipvs';

export interface IpvsSnapshot extends RuleSnapshot {
  readonly mode: typeof IPVS_TRACE_MODE;
  /** Virtual servers of the family by `protocol address port` (see vsLookupKey). */
  readonly virtualServers: ReadonlyMap<string, VirtualServer>;
  readonly ipsets: IpsetIndex;
  /** Addresses bound on kube-ipvs0 (local addresses of the node, as the kernel sees them). */
  readonly serviceAddresses: readonly string[];
  readonly tables: SavedTables;
}

export interface IpvsSnapshotTexts {
  readonly family: IPFamily;
  readonly source: string;
  readonly ipvsadmSave: string;
  readonly ipsetSave: string;
  /** Addresses of kube-ipvs0 (with or without a prefix length). */
  readonly serviceAddresses: readonly string[];
  readonly iptablesSave: string | SavedTables;
}

/** The virtual server lookup key of a destination. */
export function vsLookupKey(protocol: Protocol | string, address: string, port: number): string {
  return `${protocol} ${address} ${port}`;
}

export function buildIpvsSnapshot(texts: IpvsSnapshotTexts): IpvsSnapshot {
  const virtualServers = new Map<string, VirtualServer>();
  for (const vs of parseIpvsadmSave(texts.ipvsadmSave, texts.family)) virtualServers.set(vsLookupKey(vs.protocol, vs.address, vs.port), vs);
  const serviceAddresses: string[] = [];
  for (const a of texts.serviceAddresses) {
    const ip = canonicalIP(a.split('/')[0] ?? '');
    if (ip !== undefined && ip.includes(':') === (texts.family === 'IPv6')) serviceAddresses.push(ip);
  }
  return {
    mode: IPVS_TRACE_MODE,
    family: texts.family,
    source: texts.source,
    virtualServers,
    ipsets: IpsetIndex.fromSave(texts.ipsetSave),
    serviceAddresses,
    tables: typeof texts.iptablesSave === 'string' ? parseIptablesSave(texts.iptablesSave) : texts.iptablesSave,
  };
}

export function isIpvsSnapshot(snapshot: RuleSnapshot): snapshot is IpvsSnapshot {
  return snapshot.mode === IPVS_TRACE_MODE && (snapshot as IpvsSnapshot).virtualServers instanceof Map;
}

/** The `-A` line as `ipvsadm --save -n` prints it (options others set included). */
export function virtualServerLine(vs: VirtualServer): string {
  return addServiceLine(vs) + (vs.otherOptions ?? []).map((o) => ` ${o}`).join('');
}

const FORWARDING_FLAG = { route: '-g', tunnel: '-i' } as const;

/** The `-a` line as `ipvsadm --save -n` prints it. */
export function realServerLine(vs: VirtualServer, rs: RealServer): string {
  const line = addServerLine(vs, rs);
  const forwarded = rs.forwarding === undefined ? line : line.replace(/ -m -w /, ` ${FORWARDING_FLAG[rs.forwarding]} -w `);
  return forwarded + (rs.otherOptions ?? []).map((o) => ` ${o}`).join('');
}

/** `TCP 10.96.0.10:80` / `TCP [fd00::a]:80`: how trace output names a virtual server. */
export function virtualServerName(vs: Pick<VirtualServer, 'protocol' | 'address' | 'port'>): string {
  return `${vs.protocol} ${vs.address.includes(':') ? `[${vs.address}]` : vs.address}:${vs.port}`;
}
