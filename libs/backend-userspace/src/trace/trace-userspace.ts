/**
 * Where a packet goes in userspace mode: the capture rules (iptables nat, walked by the
 * netfilter-iptables engine) REDIRECT or DNAT it to a proxy socket of this node, and the proxy
 * opens its own connection to one of the socket's endpoints, round robin (equal chances; ClientIP
 * affinity sticks a client to one, so all stay possible). The endpoint therefore always sees the
 * node's address: masquerade is true. A socket without endpoints answers by itself
 * (proxy/tcp-proxy-socket.ts, udp-proxy-socket.ts): a TCP connection is accepted and reset at once
 * (the client sees "connection reset/refused": REJECT), a UDP datagram is dropped (DROP).
 * loadBalancerSourceRanges are not enforced in this mode (its capture rules have none).
 */
import type { PacketTrace, TraceNode, TracePacket, TraceStep } from '@kube-proxy/core';
import { formatHostPort, sortedEndpoints, traceWords } from '@kube-proxy/core';
import { servicePortOfComment, traceIptables, type IptablesTrace } from '@kube-proxy/netfilter-iptables';
import type { ProxySocketRow } from './proxy-socket-table.js';
import { socketKey, type UserspaceSnapshot } from './userspace-snapshot.js';

/** `ns/name:port` of a table's SERVICE-PORT cell (`ns/name` for an unnamed port). */
function servicePortName(cell: string): string {
  return servicePortOfComment(cell) ?? cell;
}

function iptablesSteps(it: IptablesTrace): TraceStep[] {
  return it.steps.map((s) => {
    const service = servicePortOfComment(s.comment);
    return { where: `${s.table}/${s.chain}`, rule: s.rule, ...(service !== undefined ? { service } : {}), ...(s.note !== undefined ? { note: s.note } : {}) };
  });
}

/** The proxy port the capture sent the packet to, and the address it was sent to. */
function captured(it: IptablesTrace): { port: number; proxy: string } | undefined {
  if (it.redirect) return { port: it.redirect.port, proxy: formatHostPort(it.filterDestination.ip, it.redirect.port) };
  const first = it.dnat[0];
  return first && /^KUBE-(PORTALS|NODEPORT)-/.test(first.chain) ? { port: first.port, proxy: first.destination } : undefined;
}

function throughSocket(snapshot: UserspaceSnapshot, packet: TracePacket, node: TraceNode, it: IptablesTrace, path: TraceStep[], at: { port: number; proxy: string }): PacketTrace {
  const socket: ProxySocketRow | undefined = snapshot.sockets.get(socketKey(packet.protocol, at.port));
  const service = servicePortOfComment(it.decidedBy?.comment) ?? (socket ? servicePortName(socket.servicePort) : null);
  const label = service ?? `proxy port ${at.port}`;
  path.push({ where: `proxy socket ${packet.protocol} ${at.proxy}`, rule: socket?.text ?? `proxy port ${at.port}`, ...(service ? { service } : {}) });
  const masq = { masquerade: true, masqueradeReason: traceWords.proxyConnectsFromNode, service, path };
  const endpoints = snapshot.endpointsKnown ? socket?.endpoints : null;
  if (endpoints === null || endpoints === undefined) {
    return { verdict: 'DNAT', endpoints: [at.proxy], choices: [{ endpoint: at.proxy, probability: 1 }], ...masq, reason: traceWords.proxyEndpointsUnknown(label, at.proxy) };
  }
  if (endpoints.length === 0) {
    // A socket of its own for external traffic exists only when a Local policy picks other endpoints.
    const why = socket?.serves === 'external' ? `${traceWords.noLocalEndpoints(label, node.name)}; ` : '';
    return { verdict: packet.protocol === 'UDP' ? 'DROP' : 'REJECT', endpoints: [], choices: [], ...masq, masquerade: false, masqueradeReason: traceWords.notMasqueraded, reason: why + traceWords.proxyRefuses(label, packet.protocol) };
  }
  const choices = endpoints.map((endpoint) => ({ endpoint, probability: 1 / endpoints.length }));
  return { verdict: 'DNAT', endpoints: sortedEndpoints(endpoints), choices, ...masq, reason: traceWords.sentTo(label, endpoints.length) };
}

export function traceUserspace(snapshot: UserspaceSnapshot, packet: TracePacket, node: TraceNode): PacketTrace {
  const it = traceIptables(snapshot.tables, packet, node);
  const path = iptablesSteps(it);
  const none = { endpoints: [], choices: [], masquerade: it.masquerade, masqueradeReason: traceWords.notMasqueraded, service: servicePortOfComment(it.decidedBy?.comment) ?? null, path };
  if (it.verdict === 'REJECT' || it.verdict === 'DROP') {
    return { verdict: it.verdict, ...none, reason: `${it.decidedBy?.table}/${it.decidedBy?.chain} refuses the packet: ${it.decidedBy?.rule}` };
  }
  const at = captured(it);
  if (at !== undefined) return throughSocket(snapshot, packet, node, it, path, at);
  if (it.verdict === 'DNAT') {
    const choices = it.dnat.map((d) => ({ endpoint: d.destination, probability: d.probability }));
    return { ...none, verdict: 'DNAT', endpoints: sortedEndpoints(choices.map((c) => c.endpoint)), choices, reason: traceWords.sentTo(none.service ?? it.dnat[0]?.chain ?? '', choices.length) };
  }
  return { verdict: 'ACCEPT', ...none, reason: traceWords.noServiceRule(packet.destIP, packet.destPort, packet.protocol) };
}
