import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { EndpointSliceHandler, NodeHandler, ServiceHandler } from '@kube-proxy/core';
import type { ObjectHandler } from './handler-adapter.js';

// One adapter per resource, mapping the generic handler onto core's handler interfaces, as
// upstream's ServiceConfig, EndpointSliceConfig and NodeConfig do for their informers.

export function serviceHandler(h: ServiceHandler): ObjectHandler<V1Service> {
  return {
    add: (s) => h.onServiceAdd(s),
    update: (prev, cur) => h.onServiceUpdate(prev, cur),
    delete: (s) => h.onServiceDelete(s),
    synced: () => h.onServicesSynced(),
  };
}

export function endpointSliceHandler(h: EndpointSliceHandler): ObjectHandler<V1EndpointSlice> {
  return {
    add: (s) => h.onEndpointSliceAdd(s),
    update: (prev, cur) => h.onEndpointSliceUpdate(prev, cur),
    delete: (s) => h.onEndpointSliceDelete(s),
    synced: () => h.onEndpointSlicesSynced(),
  };
}

export function nodeHandler(h: NodeHandler): ObjectHandler<V1Node> {
  return {
    add: (n) => h.onNodeAdd(n),
    update: (prev, cur) => h.onNodeUpdate(prev, cur),
    delete: (n) => h.onNodeDelete(n),
    synced: () => h.onNodeSynced(),
  };
}
