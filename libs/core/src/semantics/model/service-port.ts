import type { IPFamily, Protocol } from './protocol.js';
import type { ServicePortName } from './service-port-name.js';

/**
 * One Service port as a proxier of one IP family sees it: upstream's BaseServicePortInfo.
 * Built once in core from a v1.Service (see `servicePortsFromService`); backends only read it.
 * Derived booleans are computed at construction so hot sync loops never recompute them.
 */
export interface ServicePort {
  readonly name: ServicePortName;
  readonly family: IPFamily;
  readonly clusterIP: string;
  readonly port: number;
  readonly protocol: Protocol;
  /** 0 when the port has no NodePort. */
  readonly nodePort: number;
  /** spec.externalIPs of this family. */
  readonly externalIPs: readonly string[];
  /** status.loadBalancer.ingress[].ip of this family whose ipMode is VIP or unset. */
  readonly loadBalancerVIPs: readonly string[];
  /** spec.loadBalancerSourceRanges, trimmed, of this family (CIDR strings). */
  readonly loadBalancerSourceRanges: readonly string[];
  /** 'ClientIP' affinity enabled. */
  readonly sessionAffinityClientIP: boolean;
  /** sessionAffinityConfig.clientIP.timeoutSeconds (default 10800) when ClientIP affinity is on, else 0. */
  readonly stickyMaxAgeSeconds: number;
  /** externalTrafficPolicy == Local (only meaningful when externally accessible). */
  readonly externalPolicyLocal: boolean;
  /** internalTrafficPolicy == Local. */
  readonly internalPolicyLocal: boolean;
  /** spec.healthCheckNodePort, 0 when none. */
  readonly healthCheckNodePort: number;
  /** spec.trafficDistribution, "" when unset. */
  readonly trafficDistribution: string;
  /** The deprecated topology-mode / topology-aware-hints annotation value, "" when unset. */
  readonly hintsAnnotation: string;
  /** nodePort != 0 || externalIPs || loadBalancerVIPs. */
  readonly externallyAccessible: boolean;
  /** Some traffic to this port is routed to all endpoints (cluster policy). */
  readonly usesClusterEndpoints: boolean;
  /** Some traffic to this port is routed to node-local endpoints only (Local policy). */
  readonly usesLocalEndpoints: boolean;
}
