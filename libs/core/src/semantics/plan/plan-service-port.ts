/**
 * planServicePort: the one place the Kubernetes meaning of a service port is decided for every
 * kernel backend (upstream decides it inline in each proxier's syncProxyRules; the iptables
 * proxier's comments name the same decisions). Pure and allocation-light: one plan object per call,
 * no closures, the endpoint arrays are categorizeEndpoints' own (or one shared empty array).
 */
import type { Endpoint } from '../model/endpoint.js';
import { cidrContains } from '../model/ip.js';
import type { ServicePort } from '../model/service-port.js';
import { categorizeEndpoints } from '../topology/categorize-endpoints.js';
import type { TopologyGates } from '../topology/topology-gates.js';
import type { EndpointSetKind, ExternalMasquerade, InternalMasquerade, NoEndpointsVerdict, ServicePortPlan } from './service-port-plan.js';

/** What the node and the configuration contribute to every plan of one sync (build it once per sync). */
export interface ServicePlanContext {
  readonly nodeName: string;
  readonly nodeLabels: Readonly<Record<string, string>>;
  /** Feature gates topology reads; default every gate at its default. */
  readonly topologyGates?: TopologyGates;
  /** --masquerade-all: masquerade all cluster IP traffic. */
  readonly masqueradeAll: boolean;
  /** A local-traffic detector is configured (upstream's LocalTrafficDetector.IsImplemented()). */
  readonly localDetection: boolean;
  /** This node's IP of the plan's family (lets the node through source ranges); null if unknown. */
  readonly nodeIP: string | null;
}

const EMPTY_ENDPOINTS: readonly Endpoint[] = [];
const EMPTY_STRINGS: readonly string[] = [];

/** Whether `ip` lies in one of `ranges`. */
function inRanges(ranges: readonly string[], ip: string): boolean {
  for (let i = 0; i < ranges.length; i++) if (cidrContains(ranges[i], ip)) return true;
  return false;
}

/**
 * The plan of `svc` given its endpoints (in EndpointsMap order) on this node. See ServicePortPlan
 * for what each field means; the reasons for each decision are below, one line each.
 */
export function planServicePort(svc: ServicePort, endpoints: readonly Endpoint[], ctx: ServicePlanContext): ServicePortPlan {
  const cat = categorizeEndpoints(endpoints, svc, ctx.nodeName, ctx.nodeLabels, ctx.topologyGates);
  const clusterEndpoints = cat.clusterEndpoints ?? EMPTY_ENDPOINTS;
  const localEndpoints = cat.localEndpoints ?? EMPTY_ENDPOINTS;
  const hasEndpoints = cat.hasAnyEndpoints;

  // Each class reaches the set its policy names; a Local class with no local endpoint reaches nothing.
  const internalReachable = hasEndpoints && !(svc.internalPolicyLocal && localEndpoints.length === 0);
  const externalReachable = hasEndpoints && !(svc.externalPolicyLocal && localEndpoints.length === 0);
  // No endpoint anywhere: reject (fail fast); only no local one: drop (another node may serve it).
  const internalVerdict: NoEndpointsVerdict | null = internalReachable ? null : hasEndpoints ? 'drop' : 'reject';
  const externalVerdict: NoEndpointsVerdict | null = externalReachable ? null : hasEndpoints ? 'drop' : 'reject';

  // Cluster IP traffic needs SNAT when everything is masqueraded, or when it comes from off-cluster
  // (the reply would otherwise bypass this node); without a detector upstream writes no such rule.
  let internalMasquerade: InternalMasquerade = 'none';
  if (internalReachable) internalMasquerade = ctx.masqueradeAll ? 'all' : ctx.localDetection ? 'off-cluster' : 'none';

  // The external path exists whenever something could serve the port, even if no external client
  // can be served: traffic from this node and its pods is short-circuited to the cluster endpoints.
  const externalPath = hasEndpoints && svc.externallyAccessible;
  const externalMasquerade: ExternalMasquerade = !externalPath ? 'none' : svc.externalPolicyLocal ? 'local-sources' : 'all';

  // Source ranges only guard load-balancer IPs, and only matter while something could be reached.
  const lbIPs = svc.loadBalancerVIPs;
  const ranges = svc.loadBalancerSourceRanges;
  const firewalled = hasEndpoints && lbIPs.length > 0 && ranges.length > 0;
  const nodeIP = ctx.nodeIP;

  return {
    service: svc,
    hasEndpoints,
    clusterEndpoints,
    localEndpoints,
    reachableEndpoints: cat.allReachableEndpoints,
    balancesClusterEndpoints: clusterEndpoints.length > 0 && svc.usesClusterEndpoints,
    balancesLocalEndpoints: localEndpoints.length > 0 && svc.usesLocalEndpoints,
    sessionAffinity: svc.sessionAffinityClientIP,
    affinitySeconds: svc.sessionAffinityClientIP ? svc.stickyMaxAgeSeconds : 0,
    clusterIP: svc.clusterIP,
    internalEndpoints: svc.internalPolicyLocal ? 'local' : 'cluster',
    internalReachable,
    internalVerdict,
    internalMasquerade,
    externalIPs: svc.externalIPs,
    loadBalancerIPs: lbIPs,
    nodePort: svc.nodePort,
    externalAccepted: hasEndpoints,
    externalEndpoints: svc.externalPolicyLocal ? 'local' : 'cluster',
    externalReachable,
    externalVerdict,
    externalMasquerade,
    podsBypassExternalPolicy: externalMasquerade === 'local-sources' && ctx.localDetection,
    firewalled,
    firewallSourceRanges: firewalled ? ranges : EMPTY_STRINGS,
    // The node's own requests to an LB IP come back with that IP as source (VIP-like LBs).
    firewallAllowsLoadBalancerIPs: firewalled && nodeIP !== null && inRanges(ranges, nodeIP),
    // An endpoint reaching itself through the service would see its own address as source.
    masqueradeHairpin: true,
    healthCheckNodePort: svc.healthCheckNodePort,
  };
}

/** The endpoints of the set a traffic class is sent to (`plan.internalEndpoints` / `plan.externalEndpoints`). */
export function endpointSetOf(plan: ServicePortPlan, kind: EndpointSetKind): readonly Endpoint[] {
  return kind === 'local' ? plan.localEndpoints : plan.clusterEndpoints;
}
