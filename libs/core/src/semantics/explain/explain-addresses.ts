/*
 * The addresses one Service port answers on, by traffic class, and the source-range firewall in front
 * of its load-balancer IPs. The lists come from the ServicePort (servicePortsFromService) and the
 * NodePortAddressPlan the proxiers use; only ipMode Proxy ingresses, which the ServicePort drops, are
 * read from the Service here, to say that they are left to the load balancer.
 */
import type { V1Service } from '@kubernetes/client-node';
import { canonicalIP, isLoopbackIP } from '../model/ip.js';
import type { IPFamily } from '../model/protocol.js';
import type { ServicePort } from '../model/service-port.js';
import type { NodePortAddressPlan } from '../plan/node-port-address-plan.js';
import type { ServicePortPlan } from '../plan/service-port-plan.js';
import { formatHostPort } from '../trace/trace-words.js';
import type { AnsweringAddress, NodePortExplanation, SourceRangeExplanation } from './service-explanation.js';

const PROXY_MODE_NOTE = 'ipMode Proxy: the load balancer sends traffic to the node addresses itself, so kube-proxy programs no rule for this IP';

/** status.loadBalancer.ingress IPs of `family` with ipMode Proxy, canonical. */
export function proxyModeIngressIPs(svc: V1Service, family: IPFamily): string[] {
  const out: string[] = [];
  for (const ing of svc.status?.loadBalancer?.ingress ?? []) {
    if (ing?.ipMode !== 'Proxy' || typeof ing.ip !== 'string') continue;
    const ip = canonicalIP(ing.ip);
    if (ip !== undefined && (ip.includes(':') ? 'IPv6' : 'IPv4') === family && !out.includes(ip)) out.push(ip);
  }
  return out;
}

function address(trafficClass: AnsweringAddress['trafficClass'], kind: AnsweringAddress['kind'], ip: string, port: number): AnsweringAddress {
  return { trafficClass, kind, address: formatHostPort(ip, port), ip, port, programmed: true };
}

/** The node addresses a NodePort answers on, as far as the node's `addresses` (this family) show them. */
export function nodePortExplanation(
  svc: ServicePort,
  plan: NodePortAddressPlan,
  nodeAddresses: readonly string[],
  cidrs: readonly string[],
  defaultedToPrimary = false,
): NodePortExplanation {
  if (svc.nodePort === 0) return { nodePort: 0, allLocalAddresses: false, addresses: [], localhost: false, reason: 'the port has no NodePort' };
  const family = svc.family;
  let addresses: string[];
  let reason: string;
  if (plan.allLocalAddresses) {
    addresses = nodeAddresses.filter((ip) => !(plan.excludeLoopback && isLoopbackIP(ip)));
    reason = `nodePortAddresses selects no ${family} range: the NodePort answers on every local ${family} address of the node`;
  } else {
    addresses = [...plan.addresses];
    reason = addresses.length === 0
      ? `nodePortAddresses (${cidrs.join(', ')}) selects none of the node's ${family} addresses: the NodePort answers nowhere`
      : `nodePortAddresses (${cidrs.join(', ')}) selects these node addresses`;
    if (defaultedToPrimary) reason += " (nftables mode: no nodePortAddresses means the node's primary IP)";
  }
  if (plan.localhostNodePorts) reason += '; also on 127.0.0.0/8 (iptables.localhostNodePorts, route_localnet)';
  return { nodePort: svc.nodePort, allLocalAddresses: plan.allLocalAddresses, addresses, localhost: plan.localhostNodePorts, reason };
}

/** Every address of the port, internal first, then external IPs, load-balancer IPs, NodePort addresses. */
export function answeringAddresses(svc: ServicePort, proxyIngress: readonly string[], nodePort: NodePortExplanation): AnsweringAddress[] {
  const out: AnsweringAddress[] = [address('internal', 'clusterIP', svc.clusterIP, svc.port)];
  for (const ip of svc.externalIPs) out.push(address('external', 'externalIP', ip, svc.port));
  for (const ip of svc.loadBalancerVIPs) out.push({ ...address('external', 'loadBalancerIP', ip, svc.port), ipMode: 'VIP' });
  for (const ip of proxyIngress) {
    out.push({ ...address('external', 'loadBalancerIP', ip, svc.port), programmed: false, ipMode: 'Proxy', note: PROXY_MODE_NOTE });
  }
  for (const ip of nodePort.addresses) out.push(address('external', 'nodePort', ip, nodePort.nodePort));
  if (nodePort.localhost && !nodePort.addresses.some((ip) => isLoopbackIP(ip))) {
    out.push({ ...address('external', 'nodePort', '127.0.0.1', nodePort.nodePort), note: 'localhost NodePort (iptables.localhostNodePorts, route_localnet)' });
  }
  return out;
}

/** loadBalancerSourceRanges as the plan enforces it. */
export function sourceRangeExplanation(plan: ServicePortPlan): SourceRangeExplanation {
  const ranges = plan.service.loadBalancerSourceRanges;
  const base = { ranges, enforced: plan.firewalled, allowsLoadBalancerIPs: plan.firewallAllowsLoadBalancerIPs };
  if (ranges.length === 0) return { ...base, reason: 'no loadBalancerSourceRanges of this family (or one allows everyone): every source may reach the load-balancer IPs' };
  if (plan.loadBalancerIPs.length === 0) return { ...base, reason: 'loadBalancerSourceRanges is set, but the port has no load-balancer IP this node answers on: nothing to filter' };
  if (!plan.firewalled) return { ...base, reason: 'loadBalancerSourceRanges is not enforced while the Service has no usable endpoint (connections are refused anyway)' };
  let reason = `only sources in ${ranges.join(', ')} reach the load-balancer IPs of ${plan.service.name.key}; any other source is dropped`;
  if (plan.firewallAllowsLoadBalancerIPs) reason += '; the node is inside the ranges, so its own traffic to the load-balancer IPs (sourced from them) is allowed too';
  return { ...base, reason };
}
