/**
 * objectsOf of the IPVS tracer (for `explain`): the kernel objects of one Service. IPVS objects
 * carry no name, so a Service is found through what does name it: ipset entries with a comment
 * (`ns/name:port`) and iptables rules whose comment names it; the virtual servers at the addresses
 * those entries hold follow. Neither our layout nor upstream's comments its entries, so on such a
 * node this is empty and `ipvsObjectsAt` finds the objects by the Service's addresses instead.
 */
import type { KernelObject, Protocol } from '@kube-proxy/core';
import { canonicalIP, formatHostPort, serviceOfPort } from '@kube-proxy/core';
import { servicePortOfComment } from '@kube-proxy/netfilter-iptables';
import { virtualServerName, type IpvsSnapshot } from './ipvs-snapshot.js';

export interface ServiceAddress {
  readonly protocol: Protocol;
  readonly address: string;
  readonly port: number;
}

/** The virtual server and the ipset entries at each of `addresses` (`explain` knows them from the Service). */
export function ipvsObjectsAt(snapshot: IpvsSnapshot, addresses: readonly ServiceAddress[]): KernelObject[] {
  const out: KernelObject[] = [];
  const seen = new Set<string>();
  for (const a of addresses) {
    const address = canonicalIP(a.address) ?? a.address;
    for (const vs of snapshot.virtualServers.values()) {
      if (vs.protocol !== a.protocol || vs.address !== address || vs.port !== a.port || seen.has(vs.key)) continue;
      seen.add(vs.key);
      out.push({ kind: 'virtual server', name: virtualServerName(vs), rules: vs.realServers.length, endpoints: vs.realServers.filter((r) => r.weight > 0).map((r) => formatHostPort(r.address, r.port)) });
    }
    const packet = { family: snapshot.family, protocol: a.protocol, sourceIP: address, destIP: address, destPort: a.port, locallyGenerated: false } as const;
    for (const set of snapshot.ipsets.names()) {
      const entry = snapshot.ipsets.lookup(set, 'dst,dst', packet);
      const key = `${set} ${entry?.text}`;
      if (entry === undefined || seen.has(key)) continue;
      seen.add(key);
      out.push({ kind: 'ipset entry', name: key, rules: 1 });
    }
  }
  return out;
}

function hostPortOf(entry: string): ServiceAddress | undefined {
  const m = /^([^,\s]+),(tcp|udp|sctp):(\d+)/.exec(entry);
  const address = m === null ? undefined : canonicalIP(m[1] as string);
  return m === null || address === undefined ? undefined : { protocol: (m[2] as string).toUpperCase() as Protocol, address, port: Number(m[3]) };
}

/** The objects that name Service `service` (`ns/name`), and the virtual servers at their addresses. */
export function ipvsObjectsOf(snapshot: IpvsSnapshot, service: string): KernelObject[] {
  const addresses: ServiceAddress[] = [];
  const entries: KernelObject[] = [];
  for (const set of snapshot.ipsets.names()) {
    for (const e of snapshot.ipsets.entries(set)) {
      const named = servicePortOfComment(e.comment);
      if (named === undefined || serviceOfPort(named) !== service) continue;
      entries.push({ kind: 'ipset entry', name: `${set} ${e.text}`, rules: 1 });
      const at = hostPortOf(e.text);
      if (at !== undefined) addresses.push(at);
    }
  }
  const servers = ipvsObjectsAt(snapshot, addresses).filter((o) => o.kind === 'virtual server');
  const chains: KernelObject[] = [];
  for (const [tableName, table] of snapshot.tables.tables) {
    for (const chain of table.chains.values()) {
      const rules = chain.rules.filter((r) => {
        const named = servicePortOfComment(r.comment);
        return named !== undefined && serviceOfPort(named) === service;
      }).length;
      if (rules > 0) chains.push({ kind: 'chain', name: `${tableName}/${chain.name}`, rules });
    }
  }
  return [...servers, ...entries, ...chains];
}
