// The Kubernetes object types the handlers receive, from core (the backend imports nothing but
// @kube-proxy/core).
export type { V1EndpointSlice, V1Node, V1Service } from '@kube-proxy/core';
