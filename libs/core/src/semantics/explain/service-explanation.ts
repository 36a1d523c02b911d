/*
 * What `kube-proxy explain` says about one Service, as plain JSON-friendly data: `-o json` prints a
 * ServiceExplanation as it is, so every field name here is part of that output. Endpoints and
 * addresses are spelled `IP:PORT` / `[IPv6]:PORT` (core's formatHostPort), lists are sorted.
 */
import type { IPFamily, Protocol } from '../model/protocol.js';

/**
 * The classes of traffic a Service port receives, as upstream names them: `internal` (to the cluster
 * IP; internalTrafficPolicy applies), `external` (to external IPs, load-balancer IPs and the NodePort;
 * externalTrafficPolicy applies).
 */
export type TrafficClass = 'internal' | 'external';

/** Which kind of address a Service port answers on. */
export type AddressKind = 'clusterIP' | 'externalIP' | 'loadBalancerIP' | 'nodePort';

/** One address (and port) a Service port answers on, or, for ipMode Proxy, one it does not. */
export interface AnsweringAddress {
  readonly trafficClass: TrafficClass;
  readonly kind: AddressKind;
  /** `IP:PORT` (`[IPv6]:PORT`). */
  readonly address: string;
  readonly ip: string;
  readonly port: number;
  /**
   * Whether kube-proxy programs it. False for a load-balancer IP with ipMode Proxy (the load balancer
   * rewrites the destination, so the node never sees that IP; upstream writes no rule for it).
   */
  readonly programmed: boolean;
  /** Load-balancer IPs only: `VIP` (also when unset) or `Proxy`. */
  readonly ipMode?: 'VIP' | 'Proxy';
  /** Why, in words, when there is something to say (e.g. ipMode Proxy, localhost NodePorts). */
  readonly note?: string;
}

/** Where a Service port's NodePort answers (the nodePortAddresses selection for this family). */
export interface NodePortExplanation {
  /** The NodePort, 0 when the port has none (then the rest is empty / false). */
  readonly nodePort: number;
  /** No nodePortAddresses of this family: every local address of the node (kernel-wide, not only `addresses`). */
  readonly allLocalAddresses: boolean;
  /** The concrete node addresses it answers on, as far as the node's addresses are known. */
  readonly addresses: readonly string[];
  /** It also answers on 127.0.0.0/8 (IPv4, iptables.localhostNodePorts with a loopback selection). */
  readonly localhost: boolean;
  /** How the selection was made, in words. */
  readonly reason: string;
}

/**
 * Why an endpoint listed in an EndpointSlice is not reached by a traffic class:
 * - `not-ready`: conditions.ready is false and it is not a serving terminating endpoint;
 * - `not-serving`: terminating and conditions.serving is false;
 * - `terminating`: serving and terminating, but ready endpoints exist (the fallback to terminating
 *   endpoints only applies when none is ready);
 * - `other-node`: on another node, and the class's policy is Local;
 * - `topology-zone` / `topology-node`: topology hints (trafficDistribution or the topology annotation)
 *   send this node's traffic to endpoints hinted for its zone / itself, and this one is hinted elsewhere;
 * - `port-mismatch`: its EndpointSlice has no port of this Service port's name and protocol.
 */
export type ExclusionReason = 'not-ready' | 'not-serving' | 'terminating' | 'other-node' | 'topology-zone' | 'topology-node' | 'port-mismatch';

/** One endpoint of the Service as its EndpointSlices list it. */
export interface EndpointFacts {
  /** `IP:PORT` (`[IPv6]:PORT`); for `port-mismatch`, `IP` with the slice's ports in `detail`. */
  readonly endpoint: string;
  readonly ip: string;
  /** The target port, 0 for `port-mismatch`. */
  readonly port: number;
  readonly nodeName: string;
  readonly zone: string;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  /** On this node. */
  readonly local: boolean;
  /** hints.forZones names (empty when none). */
  readonly zoneHints: readonly string[];
  /** hints.forNodes names (empty when none). */
  readonly nodeHints: readonly string[];
}

/** An endpoint a traffic class leaves out, and why. */
export interface ExcludedEndpoint extends EndpointFacts {
  readonly reason: ExclusionReason;
  /** The reason as an operator reads it. */
  readonly detail: string;
}

/** What a connection of a class gets when no endpoint is usable. */
export interface NoEndpointVerdict {
  /** `REJECT` (the Service has no usable endpoint at all: fail fast) or `DROP` (Local policy, none on this node). */
  readonly verdict: 'REJECT' | 'DROP';
  readonly reason: string;
}

/**
 * When a class's packets are masqueraded (SNAT to the node's address):
 * - `always`: every packet (masqueradeAll for internal; Cluster policy for external);
 * - `off-cluster-sources`: packets the local-traffic detector says do not come from a pod;
 * - `node-sources`: only packets the node itself sends (external traffic under a Local policy);
 * - `never`: only hairpin packets (an endpoint reaching itself), which are always masqueraded.
 */
export type MasqueradeWhen = 'always' | 'off-cluster-sources' | 'node-sources' | 'never';

export interface MasqueradeExplanation {
  readonly when: MasqueradeWhen;
  /** Each rule that applies, in words (core's trace words where they fit). */
  readonly reasons: readonly string[];
}

/** One traffic class of one Service port. */
export interface TrafficClassExplanation {
  readonly trafficClass: TrafficClass;
  /** internalTrafficPolicy / externalTrafficPolicy. */
  readonly policy: 'Cluster' | 'Local';
  /** False for the external class of a port with no external address (nothing arrives that way). */
  readonly applies: boolean;
  /** Every endpoint a new connection may be sent to, sorted. */
  readonly endpoints: readonly string[];
  /** The same endpoints were chosen from the serving terminating ones, because none was ready. */
  readonly terminatingFallback: boolean;
  /** Topology narrowing in force for this node: `PreferSameZone`, `PreferSameNode`, or `` (none). */
  readonly topology: '' | 'PreferSameZone' | 'PreferSameNode';
  /** Every endpoint of the Service port left out, with its reason. */
  readonly excluded: readonly ExcludedEndpoint[];
  /** Set when no endpoint is usable: what a connection gets. */
  readonly noEndpoints: NoEndpointVerdict | null;
  readonly masquerade: MasqueradeExplanation;
  /**
   * External class, Local policy: what the node's own traffic (and, with a local-traffic detector,
   * pod traffic) to an external address reaches instead, sorted (the cluster endpoints); else [].
   */
  readonly shortCircuitEndpoints: readonly string[];
}

/** loadBalancerSourceRanges as this port's family enforces it. */
export interface SourceRangeExplanation {
  /** The allowed source CIDRs of this family ([] = everyone). */
  readonly ranges: readonly string[];
  /** A source filter is programmed for the load-balancer IPs. */
  readonly enforced: boolean;
  /** The node is inside the ranges, so the load-balancer IPs are allowed as sources too (node-originated LB traffic). */
  readonly allowsLoadBalancerIPs: boolean;
  readonly reason: string;
}

/** One port of the Service, for one IP family. */
export interface PortExplanation {
  /** `namespace/name:portName` (`namespace/name` for an unnamed port), as trace's `service`. */
  readonly servicePort: string;
  readonly portName: string;
  readonly family: IPFamily;
  readonly protocol: Protocol;
  readonly port: number;
  /** The addresses it answers on (and LB IPs it does not, ipMode Proxy), by traffic class. */
  readonly addresses: readonly AnsweringAddress[];
  readonly nodePort: NodePortExplanation;
  /** Always two entries: `internal`, then `external`. */
  readonly trafficClasses: readonly TrafficClassExplanation[];
  readonly sourceRanges: SourceRangeExplanation;
  /** spec.healthCheckNodePort served by this proxy (LoadBalancer with Local policy), 0 when none. */
  readonly healthCheckNodePort: number;
  /** ClientIP session affinity timeout in seconds, 0 when off. */
  readonly sessionAffinitySeconds: number;
  /** Every endpoint of this port in the EndpointSlices, with its conditions, sorted. */
  readonly sliceEndpoints: readonly EndpointFacts[];
}

/** `kube-proxy explain NAMESPACE/NAME`: what one Service means on one node. */
export interface ServiceExplanation {
  /** `namespace/name`. */
  readonly service: string;
  /** spec.type with the API default (ClusterIP). */
  readonly type: string;
  readonly node: string;
  /** The proxy mode the configuration names (`` = chosen at start). */
  readonly mode: string;
  /** The IP families explained, primary first. */
  readonly families: readonly IPFamily[];
  /** Whether kube-proxy programs anything for it. */
  readonly proxied: boolean;
  /** One sentence: why it is not proxied (headless, ExternalName, no cluster IP of a served family), or a summary. */
  readonly reason: string;
  /** Every port, per family, in spec order (families in `families` order within a port). */
  readonly ports: readonly PortExplanation[];
  /** What was noticed and skipped (malformed fields, families the Service has but the proxy does not serve). */
  readonly notes: readonly string[];
}
