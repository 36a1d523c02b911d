/*
 * The sentences `kube-proxy trace` prints, in Kubernetes terms, shared by every mode's tracer so that
 * the same situation reads the same in iptables, nftables, IPVS and userspace (and in plugins).
 */
import type { TraceProtocol } from '../../contracts/packet-trace.js';
import { canonicalIP } from '../model/ip.js';

/** `IP:PORT`, or `[IPv6]:PORT`: how trace output spells an endpoint or a destination. */
export function formatHostPort(ip: string, port: number | string): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** Splits `IP:PORT` / `[IPv6]:PORT` (canonical IP); null when malformed. */
export function parseHostPort(text: string): { ip: string; port: number } | null {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:[\]]+):(\d{1,5})$/.exec(text);
  if (!m) return null;
  const ip = canonicalIP(m[1]!);
  const port = Number(m[2]);
  if (ip === undefined || port < 1 || port > 65535) return null;
  return { ip, port };
}

/** Sorted, de-duplicated endpoint list as PacketTrace.endpoints wants it. */
export function sortedEndpoints(endpoints: Iterable<string>): string[] {
  return [...new Set(endpoints)].sort();
}

/** The `namespace/name` of a `namespace/name:port` Service port name. */
export function serviceOfPort(servicePort: string): string {
  const colon = servicePort.indexOf(':');
  return colon < 0 ? servicePort : servicePort.slice(0, colon);
}

export const traceWords = {
  sentTo: (servicePort: string, count: number): string =>
    `${servicePort} sends the connection to ${count === 1 ? 'its only endpoint' : `one of ${count} endpoints`}`,
  noEndpoints: (servicePort: string): string => `service ${serviceOfPort(servicePort)} has no ready endpoints for port ${servicePort}`,
  noLocalEndpoints: (servicePort: string, node: string): string =>
    `externalTrafficPolicy Local and no local endpoint of ${servicePort} on ${node}`,
  outsideSourceRanges: (sourceIP: string, servicePort: string): string =>
    `source ${sourceIP} is outside loadBalancerSourceRanges of ${servicePort}`,
  unallocatedClusterIP: (ip: string): string => `cluster IP ${ip} is not allocated to any Service`,
  invalidClusterIPPort: (ip: string, port: number, protocol: TraceProtocol): string =>
    `cluster IP ${ip} belongs to a Service, but not on ${protocol} port ${port}`,
  noServiceRule: (ip: string, port: number, protocol: TraceProtocol): string =>
    `no Service rule matches ${protocol} ${formatHostPort(ip, port)}; the packet passes unchanged`,
  masqueradeOffCluster: 'traffic to a cluster IP from outside the cluster CIDR is masqueraded',
  masqueradeAll: 'masqueradeAll is set',
  masqueradeExternal: 'external traffic under externalTrafficPolicy Cluster is masqueraded',
  masqueradeHairpin: 'a pod reaching itself through the Service (hairpin) is masqueraded',
  masqueradeLocalSource: 'traffic the node itself sends to an external address is masqueraded',
  notMasqueraded: 'no rule marks the packet for masquerade; the source address is kept',
  noLocalEndpointsInternal: (servicePort: string, node: string): string =>
    `internalTrafficPolicy Local and no local endpoint of ${servicePort} on ${node}`,
  masqueradeNotFromPodInterface: (interfaces: string): string =>
    `traffic to a cluster IP that does not arrive on ${interfaces} (the pods' interfaces) is masqueraded`,
  noLocalDetector: 'no local-traffic detector is configured (clusterCIDR or detectLocalMode), so cluster IP traffic keeps its source',
  podsBypassLocalPolicy: 'pods reaching an external address are sent to the cluster endpoints, without masquerade',
  endpointNotReady: 'not ready',
  endpointNotServing: 'terminating and not serving',
  endpointTerminating: 'terminating, and ready endpoints exist (terminating endpoints are only used when none is ready)',
  endpointOtherNode: (node: string, policy: string): string =>
    `on ${node === '' ? 'no named node' : `node ${node}`}, and ${policy} is Local`,
  endpointOtherZone: (zone: string): string =>
    `topology hints send this node's traffic to endpoints hinted for zone ${zone === '' ? '(none)' : zone}; this one is hinted for another`,
  endpointOtherNodeHint: (node: string): string =>
    `topology hints send this node's traffic to endpoints hinted for node ${node}; this one is hinted for another`,
  endpointPortMismatch: (servicePort: string, slicePorts: string): string =>
    `its EndpointSlice has no port named like ${servicePort} (it has ${slicePorts})`,
  // Modes whose kernel objects do not name their Service (IPVS): the Service is named by where it answers.
  noEndpointsAt: (where: string): string => `the Service at ${where} has no ready endpoints`,
  serviceAddressWrongPort: (ip: string, port: number, protocol: TraceProtocol): string =>
    `${ip} is a Service address on this node, but no Service answers on ${protocol} port ${port}`,
  masqueradeFromServiceAddress: 'traffic the node sends from a Service address (kube-ipvs0) is masqueraded',
  // Userspace mode: the proxy socket itself answers a connection it cannot forward.
  proxyRefuses: (servicePort: string, protocol: TraceProtocol): string =>
    protocol === 'UDP'
      ? `service ${serviceOfPort(servicePort)} has no ready endpoints for port ${servicePort}: the userspace proxy drops the datagram`
      : `service ${serviceOfPort(servicePort)} has no ready endpoints for port ${servicePort}: the userspace proxy resets the connection`,
  proxyEndpointsUnknown: (servicePort: string, proxy: string): string =>
    `${servicePort} is captured to the userspace proxy socket ${proxy}, which forwards it to one of the Service's endpoints; the kernel does not hold them (the running proxy's /debug/trace names them)`,
  proxyConnectsFromNode: "the userspace proxy opens its own connection to the endpoint: the endpoint sees the node's address, not the client's",
} as const;
