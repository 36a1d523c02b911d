import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';

/** The Kubernetes objects handlers receive, re-exported so backends need no client dependency. */
export type { V1EndpointSlice, V1Node, V1Service };

/**
 * Receives Service changes, with upstream's ServiceHandler semantics: update carries the previous
 * and the current object; `onServicesSynced` is called once, after the initial list has been delivered.
 */
export interface ServiceHandler {
  onServiceAdd(service: V1Service): void;
  onServiceUpdate(previous: V1Service, current: V1Service): void;
  onServiceDelete(service: V1Service): void;
  onServicesSynced(): void;
}

/** Receives EndpointSlice changes (discovery.k8s.io/v1). */
export interface EndpointSliceHandler {
  onEndpointSliceAdd(slice: V1EndpointSlice): void;
  onEndpointSliceUpdate(previous: V1EndpointSlice, current: V1EndpointSlice): void;
  onEndpointSliceDelete(slice: V1EndpointSlice): void;
  onEndpointSlicesSynced(): void;
}

/** Receives changes of the proxy's own Node object. */
export interface NodeHandler {
  onNodeAdd(node: V1Node): void;
  onNodeUpdate(previous: V1Node, current: V1Node): void;
  onNodeDelete(node: V1Node): void;
  onNodeSynced(): void;
}

/**
 * Receives the cluster's Service CIDRs (networking.k8s.io/v1 ServiceCIDR): every time the set changes,
 * the complete list of the CIDRs of all ServiceCIDR objects, both families, as upstream's
 * ServiceCIDRConfig hands it to OnServiceCIDRsChanged.
 */
export interface ServiceCIDRHandler {
  onServiceCIDRsChanged(cidrs: readonly string[]): void;
}
