import type { Endpoint, EndpointsMap, ServicePort, ServicePortMap, TopologyGates } from '@kube-proxy/core';
import { categorizeEndpoints } from '@kube-proxy/core';
import type { ProxyTarget } from '../proxy/endpoint-picker.js';

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

function targets(endpoints: readonly Endpoint[] | null): readonly ProxyTarget[] {
  if (endpoints === null || endpoints.length === 0) return NONE;
  return endpoints
    .map((e) => ({ ip: e.ip, port: e.port, key: e.key }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The service ports to proxy and the endpoints of each, decided by core's categorizeEndpoints
 * (ready endpoints; serving-terminating ones when none is ready; traffic policies; topology).
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
): DesiredPort[] {
  const out: DesiredPort[] = [];
  for (const [key, service] of serviceMap) {
    if (service.protocol === 'SCTP') {
      skipped(key, 'SCTP is not supported by the userspace proxy');
      continue;
    }
    const categorized = categorizeEndpoints(endpointsMap.get(key) ?? [], service, nodeName, nodeLabels, gates);
    const internal = targets(service.internalPolicyLocal ? categorized.localEndpoints : categorized.clusterEndpoints);
    const split = service.externallyAccessible && service.externalPolicyLocal !== service.internalPolicyLocal;
    const external = split ? targets(service.externalPolicyLocal ? categorized.localEndpoints : categorized.clusterEndpoints) : null;
    out.push({ key, service, internal, external });
  }
  out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return out;
}
