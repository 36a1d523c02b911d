import type { Provider } from '@kube-proxy/core';

// The Kubernetes object types the handlers receive, taken from core's handler contracts (the backend
// imports nothing but @kube-proxy/core).
export type V1Service = Parameters<Provider['onServiceAdd']>[0];
export type V1EndpointSlice = Parameters<Provider['onEndpointSliceAdd']>[0];
export type V1Node = Parameters<Provider['onNodeAdd']>[0];
