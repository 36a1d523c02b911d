/**
 * objectsOf of the userspace tracer (for `explain`): the capture chains' rules whose comment names
 * the Service (per chain) and its proxy sockets, with their endpoints when the snapshot knows them.
 */
import type { KernelObject } from '@kube-proxy/core';
import { serviceOfPort } from '@kube-proxy/core';
import { servicePortOfComment } from '@kube-proxy/netfilter-iptables';
import type { UserspaceSnapshot } from './userspace-snapshot.js';

export function userspaceObjectsOf(snapshot: UserspaceSnapshot, service: string): KernelObject[] {
  const out: KernelObject[] = [];
  for (const socket of snapshot.sockets.values()) {
    if (serviceOfPort(servicePortOfComment(socket.servicePort) ?? socket.servicePort) !== service) continue;
    out.push({ kind: 'proxy socket', name: `${socket.protocol} ${snapshot.listenIP ?? '*'}:${socket.proxyPort} (${socket.serves})`, rules: socket.endpoints?.length ?? 0, ...(socket.endpoints ? { endpoints: socket.endpoints } : {}) });
  }
  for (const [tableName, table] of snapshot.tables.tables) {
    for (const chain of table.chains.values()) {
      const rules = chain.rules.filter((r) => {
        const named = servicePortOfComment(r.comment);
        return named !== undefined && serviceOfPort(named) === service;
      }).length;
      if (rules > 0) out.push({ kind: 'chain', name: `${tableName}/${chain.name}`, rules });
    }
  }
  return out;
}
