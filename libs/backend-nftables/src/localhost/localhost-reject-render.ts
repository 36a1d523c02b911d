/**
 * The nftables side of localhost NodePorts (KEP-6032): what nftables mode cannot serve on
 * 127.0.0.1 / ::1 is refused by a counted reject, so a client fails at once and the operator sees
 * it in kubeproxy_nftables_localhost_nodeport_rejected_packets_total. UDP and SCTP NodePorts are
 * always rejected on loopback (the userspace proxy relays TCP only); TCP ones too when the gate is
 * on but nodePortAddresses names no loopback address (no listener runs). A TCP NodePort with a
 * listener gets no element: the proxy answers, or, with no endpoint to use, nothing listens and
 * the kernel refuses the connection.
 */
import type { Protocol, ServicePort } from '@kube-proxy/core';
import type { NftFamily } from '../nft/nft-objects.js';
import type { PlacedElement, ServicePortRender } from '../render/service-port-render.js';
import type { TableSkeleton } from '../render/table-skeleton.js';
import { CHAIN } from '../render/table-names.js';
import { LOCALHOST_REJECT_MAP, LOCALHOST_REJECT_PROTOCOLS, localhostRejectChain } from './localhost-names.js';

/**
 * The skeleton with the reject chains, their map, and the dispatch from nodeport-endpoints-check
 * (reached from filter-input for new connections: a local client's packet to a loopback address
 * comes back in on lo).
 */
export function withLocalhostReject(skeleton: TableSkeleton, family: NftFamily): TableSkeleton {
  const loopback = family === 'ip6' ? 'ip6 daddr ::1' : 'ip daddr 127.0.0.0/8';
  const dispatch = `${loopback} meta l4proto . th dport vmap @${LOCALHOST_REJECT_MAP}`;
  const chains = skeleton.chains.map((c) => (c.decl.name === CHAIN.nodePortEndpointsCheck ? { decl: c.decl, rules: [...c.rules, dispatch] } : c));
  for (const protocol of LOCALHOST_REJECT_PROTOCOLS) chains.push({ decl: { name: localhostRejectChain(protocol) }, rules: ['counter reject'] });
  return {
    ...skeleton,
    chains,
    maps: [...skeleton.maps, { name: LOCALHOST_REJECT_MAP, type: 'inet_proto . inet_service : verdict', comment: 'vmap to reject localhost NodePort packets the userspace proxy does not serve' }],
  };
}

/** Whether loopback packets to this service port's NodePort are rejected. */
export function rejectsOnLoopback(service: ServicePort, proxyActive: boolean): boolean {
  return service.nodePort > 0 && (service.protocol !== 'TCP' || !proxyActive);
}

/** The service port's element in the reject map, if its NodePort is rejected on loopback. */
export function localhostRejectElement(service: ServicePort, proxyActive: boolean): PlacedElement | null {
  if (!rejectsOnLoopback(service, proxyActive)) return null;
  const protocol: Protocol = service.protocol;
  return { container: LOCALHOST_REJECT_MAP, key: `${protocol.toLowerCase()} . ${service.nodePort}`, value: `goto ${localhostRejectChain(protocol)}` };
}

/** The render with the service port's reject element added (the render itself when there is none). */
export function withLocalhostRejectElement(render: ServicePortRender, service: ServicePort, proxyActive: boolean): ServicePortRender {
  const element = localhostRejectElement(service, proxyActive);
  return element === null ? render : { ...render, elements: [...render.elements, element] };
}
