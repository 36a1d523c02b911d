import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { KubeProxyConfiguration } from '../../config/types.js';
import type { Logger } from '../../host/logger.js';
import type { IPFamily } from '../model/protocol.js';

/**
 * The parts of the configuration that change what a Service means on a node. A whole
 * KubeProxyConfiguration fits; tests may give only these.
 */
export type ExplainConfig = Pick<
  KubeProxyConfiguration,
  'mode' | 'iptables' | 'nftables' | 'detectLocalMode' | 'detectLocal' | 'clusterCIDR' | 'nodePortAddresses' | 'featureGates'
>;

/** The node the Service is explained on. */
export interface ExplainNode {
  /** The node's name (hostnameOverride or the host name): endpoints with this nodeName are local. */
  readonly name: string;
  /** The Node object, when known: its labels (zone), spec.podCIDRs (NodeCIDR detection) and addresses. */
  readonly object?: V1Node;
  /** Replaces the Node object's labels (for the topology zone). */
  readonly labels?: Readonly<Record<string, string>>;
  /** The node's topology zone (topology.kubernetes.io/zone); overrides the labels' when given. */
  readonly zone?: string;
  /**
   * The node's own addresses, any family (a host's, or `--node-address`); when absent, the Node
   * object's InternalIP and ExternalIP addresses. NodePorts answer on those nodePortAddresses selects.
   */
  readonly addresses?: readonly string[];
  /**
   * The node's primary IP per family (`--bind-address` or the Node object's first address of the
   * family): nodePortAddresses `primary`, and whether the node itself passes loadBalancerSourceRanges.
   * When absent, the first of `addresses` of each family.
   */
  readonly nodeIPs?: Partial<Record<IPFamily, string>>;
}

/** Everything `explainService` reads; it does no I/O of its own. */
export interface ExplainInput {
  readonly service: V1Service;
  /**
   * EndpointSlices; those of other Services (by namespace and the kubernetes.io/service-name label)
   * are ignored, so a caller may pass every slice it has.
   */
  readonly endpointSlices: readonly V1EndpointSlice[];
  readonly node: ExplainNode;
  readonly config: ExplainConfig;
  /** The IP families the proxy serves (one for single-stack, both for dual-stack), primary first. */
  readonly families: readonly IPFamily[];
  /** Where warnings about malformed objects go (the same warnings the proxier would log); silent by default. */
  readonly logger?: Logger;
}
