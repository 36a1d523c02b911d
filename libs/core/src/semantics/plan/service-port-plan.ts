import type { Endpoint } from '../model/endpoint.js';
import type { ServicePort } from '../model/service-port.js';

/**
 * What one service port means on this node, for one IP family: every Kubernetes decision a kernel
 * backend (iptables, IPVS, nftables) would otherwise make for itself, made once in core
 * (planServicePort) as plain readonly data. A backend maps each field to its own datapath and
 * decides nothing of its own; upstream makes these decisions inline in each proxier's sync loop.
 *
 * Traffic classes, as upstream names them:
 * - internal: to the cluster IP (internalTrafficPolicy applies);
 * - external: to external IPs, load-balancer IPs and the node port (externalTrafficPolicy applies).
 *
 * The plan is flat (one object per service port per sync, no nested allocations) because a full
 * sync plans 10,000+ of them.
 */

/** Which endpoint set a traffic class is sent to: all usable endpoints (Cluster policy) or this node's (Local policy). */
export type EndpointSetKind = 'cluster' | 'local';

/**
 * What a backend does with traffic of a class that has nothing to reach: `reject` (the service has no
 * usable endpoint at all: ICMP/TCP reset, so clients fail fast), `drop` (Local policy and no endpoint
 * on this node: other nodes may still serve it, so stay silent).
 */
export type NoEndpointsVerdict = 'reject' | 'drop';

/**
 * Masquerading of internal (cluster IP) traffic: `all` (masqueradeAll), `off-cluster` (only traffic
 * the local-traffic detector says did not come from a pod), `none` (no detector, or nothing to reach).
 */
export type InternalMasquerade = 'all' | 'off-cluster' | 'none';

/**
 * Masquerading of external traffic: `all` (Cluster policy: the reply must come back through this
 * node), `local-sources` (Local policy: the client's address is kept, except for traffic this node
 * itself sends, which is masqueraded and sent to cluster endpoints as it cannot reach itself as
 * "external"), `none` (no external traffic path: no endpoints or not externally accessible).
 */
export type ExternalMasquerade = 'all' | 'local-sources' | 'none';

export interface ServicePortPlan {
  /** The service port planned (identity, protocol, port numbers, affinity timeout, names). */
  readonly service: ServicePort;

  // --- Endpoints per class (core's categorizeEndpoints) ---
  /** Some endpoint is usable at all (ready, or serving-and-terminating as a fallback). */
  readonly hasEndpoints: boolean;
  /** Endpoints for Cluster-policy traffic; empty when the port has none or never uses them. */
  readonly clusterEndpoints: readonly Endpoint[];
  /** Endpoints on this node for Local-policy traffic; empty when none or never used. */
  readonly localEndpoints: readonly Endpoint[];
  /** Every endpoint some class may reach, once each (each needs its own datapath entry). */
  readonly reachableEndpoints: readonly Endpoint[];
  /** Some traffic is balanced over `clusterEndpoints` (non-empty and used by a policy). */
  readonly balancesClusterEndpoints: boolean;
  /** Some traffic is balanced over `localEndpoints` (non-empty and used by a policy). */
  readonly balancesLocalEndpoints: boolean;
  /** Session affinity by client IP: a client keeps reaching the endpoint it reached first. */
  readonly sessionAffinity: boolean;
  /** How long affinity lasts after a client's last packet, in seconds (0 when off). */
  readonly affinitySeconds: number;

  // --- Internal class: the cluster IP ---
  /** The address internal traffic arrives on. */
  readonly clusterIP: string;
  /** The endpoint set internal traffic goes to (internalTrafficPolicy). */
  readonly internalEndpoints: EndpointSetKind;
  /** Internal traffic has an endpoint to go to; when false, `internalVerdict` says what to do. */
  readonly internalReachable: boolean;
  readonly internalVerdict: NoEndpointsVerdict | null;
  readonly internalMasquerade: InternalMasquerade;

  // --- External class: external IPs, load-balancer IPs, node port ---
  /** spec.externalIPs of this family. */
  readonly externalIPs: readonly string[];
  /** Load-balancer ingress IPs this node answers on (ipMode VIP or unset; Proxy-mode IPs are the LB's). */
  readonly loadBalancerIPs: readonly string[];
  /** The node port, 0 when none; it answers on the node's addresses the NodePortAddressPlan selects. */
  readonly nodePort: number;
  /**
   * External traffic is accepted and forwarded (to the external path) at all: the service has some
   * usable endpoint. Without any, only the verdict applies.
   */
  readonly externalAccepted: boolean;
  /** The endpoint set external traffic from outside goes to (externalTrafficPolicy). */
  readonly externalEndpoints: EndpointSetKind;
  /** External traffic from outside has an endpoint to go to; when false, `externalVerdict` applies. */
  readonly externalReachable: boolean;
  readonly externalVerdict: NoEndpointsVerdict | null;
  readonly externalMasquerade: ExternalMasquerade;
  /**
   * Local policy with a local-traffic detector: pod traffic to an external address is sent to the
   * cluster endpoints unmasqueraded (pods cannot be "external" clients).
   */
  readonly podsBypassExternalPolicy: boolean;

  // --- Source-range firewall (loadBalancerSourceRanges) ---
  /** LB traffic passes a source-range check before the external path; everything else is dropped. */
  readonly firewalled: boolean;
  /** The allowed source CIDRs (empty unless firewalled). */
  readonly firewallSourceRanges: readonly string[];
  /**
   * The node itself is inside the ranges, so traffic it sends to its LB IPs (which arrives with the
   * LB IP as source) is also allowed: allow the load-balancer IPs as sources too.
   */
  readonly firewallAllowsLoadBalancerIPs: boolean;

  // --- Hairpin and health check ---
  /** Traffic an endpoint sends to itself through the service is masqueraded (always, as upstream). */
  readonly masqueradeHairpin: boolean;
  /** The health-check node port to open (TCP), 0 when none. */
  readonly healthCheckNodePort: number;
}
