import type { EndpointsMap, ServicePortMap } from '../semantics/tracking/types.js';

/** `ip|port`: one key shape for frontends and backends alike (IPv6 text has colons, so not `:`). */
export function flowKey(ip: string, port: number): string {
  return `${ip}|${port}`;
}

/**
 * What the UDP datapath serves now, as the conntrack reconciliation compares flows against it:
 * each UDP frontend (ClusterIP, external IP, LoadBalancer VIP, each with its port; and each NodePort)
 * with the endpoints (`ip|port`) that are serving for it. A frontend whose service has no serving
 * endpoint has an empty set: no flow to it is legitimate.
 */
export interface UDPFrontends {
  /** `ip|port` of every UDP frontend address → serving endpoints. */
  readonly byAddress: ReadonlyMap<string, ReadonlySet<string>>;
  /** NodePort of every UDP service port that has one → serving endpoints. */
  readonly byNodePort: ReadonlyMap<number, ReadonlySet<string>>;
  /**
   * Every ClusterIP in the service map, whatever its protocol. ClusterIPs belong to services alone,
   * so a UDP flow to one on a port no UDP service port serves (a port that was removed) is stale.
   */
  readonly clusterIPs: ReadonlySet<string>;
}

/**
 * Builds the desired UDP state from the service and endpoints maps. Serving (not ready) is what
 * counts, as in the event-driven cleanup: terminating-but-serving endpoints keep their flows. One
 * endpoint set is shared by all frontends of a service port, so memory grows with UDP service ports
 * and their endpoints, not with frontends × endpoints.
 */
export function udpFrontends(serviceMap: ServicePortMap, endpointsMap: EndpointsMap): UDPFrontends {
  const byAddress = new Map<string, ReadonlySet<string>>();
  const byNodePort = new Map<number, ReadonlySet<string>>();
  const clusterIPs = new Set<string>();
  for (const [key, svc] of serviceMap) {
    if (svc.clusterIP !== '') clusterIPs.add(svc.clusterIP);
    if (svc.protocol !== 'UDP') continue;
    const serving = new Set<string>();
    for (const ep of endpointsMap.get(key) ?? []) if (ep.serving) serving.add(flowKey(ep.ip, ep.port));
    if (svc.clusterIP !== '') byAddress.set(flowKey(svc.clusterIP, svc.port), serving);
    for (const ip of svc.externalIPs) byAddress.set(flowKey(ip, svc.port), serving);
    for (const ip of svc.loadBalancerVIPs) byAddress.set(flowKey(ip, svc.port), serving);
    if (svc.nodePort !== 0) byNodePort.set(svc.nodePort, serving);
  }
  return { byAddress, byNodePort, clusterIPs };
}
