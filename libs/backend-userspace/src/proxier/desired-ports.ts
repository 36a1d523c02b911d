import type { Endpoint, EndpointsMap, ServicePlanContext, ServicePort, ServicePortMap, TopologyGates } from '@kube-proxy/core';
import { endpointSetOf, planServicePort } from '@kube-proxy/core';
import type { ProxyTarget } from '@kube-proxy/userspace-proxy';

/** What one service port needs from the userspace proxy after a sync. */
export interface DesiredPort {
  readonly key: string;
  readonly service: ServicePort;
  /** Endpoints for cluster-IP traffic (internalTrafficPolicy), sorted. */
  readonly internal: readonly ProxyTarget[];
  /**
   * Endpoints for external traffic (externalIPs, LoadBalancer IPs, NodePort) when they differ by
   * policy from the internal ones, so they need a proxy socket of their own; null otherwise.
   */
  readonly external: readonly ProxyTarget[] | null;
}

const NONE: readonly ProxyTarget[] = Object.freeze([]);
const NO_ENDPOINTS: readonly Endpoint[] = Object.freeze([]);

function targets(endpoints: readonly Endpoint[]): readonly ProxyTarget[] {
  if (endpoints.length === 0) return NONE;
  return endpoints
    .map((e) => ({ ip: e.ip, port: e.port, key: e.key }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function* present(serviceMap: ServicePortMap, keys: Iterable<string>): Iterable<[string, ServicePort]> {
  for (const key of keys) {
    const service = serviceMap.get(key);
    if (service !== undefined) yield [key, service];
  }
}

/**
 * The service ports to proxy and the endpoints of each traffic class, decided by core's
 * planServicePort (ready endpoints; serving-terminating ones when none is ready; traffic policies;
 * topology). A userspace proxy relays at layer 4, so replies always come back through it: the
 * plan's masquerade and firewall fields do not apply and its context leaves them off.
 * SCTP ports are skipped (Node.js has no SCTP sockets) and reported through `skipped`.
 */
export function desiredPorts(
  serviceMap: ServicePortMap,
  endpointsMap: EndpointsMap,
  nodeName: string,
  nodeLabels: Readonly<Record<string, string>>,
  skipped: (key: string, reason: string) => void,
  /** Feature gates core's topology reads (PreferSameTrafficDistribution); default: their defaults. */
  gates?: TopologyGates,
  /** Only these service-port keys (a partial sync's changed ones; absent keys are skipped); default: all. */
  keys?: Iterable<string>,
): DesiredPort[] {
  const context: ServicePlanContext = { nodeName, nodeLabels, topologyGates: gates, masqueradeAll: false, localDetection: false, nodeIP: null };
  const out: DesiredPort[] = [];
  for (const [key, service] of keys === undefined ? serviceMap : present(serviceMap, keys)) {
    if (service.protocol === 'SCTP') {
      skipped(key, 'SCTP is not supported by the userspace proxy');
      continue;
    }
    const plan = planServicePort(service, endpointsMap.get(key) ?? NO_ENDPOINTS, context);
    const internal = targets(endpointSetOf(plan, plan.internalEndpoints));
    // External addresses need sockets of their own only when their policy picks another set.
    const split = service.externallyAccessible && plan.externalEndpoints !== plan.internalEndpoints;
    const external = split ? targets(endpointSetOf(plan, plan.externalEndpoints)) : null;
    out.push({ key, service, internal, external });
  }
  out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return out;
}
