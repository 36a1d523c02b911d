import type { V1EndpointSlice, V1Node, V1Service, V1ServiceCIDR } from '@kubernetes/client-node';
import type { EndpointSliceHandler, NodeHandler, ServiceHandler } from '@kube-proxy/core';
import type { ServiceCIDRSet } from '../service-cidrs/service-cidr-set.js';
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

/** ServiceCIDRs go to the handler as one list (upstream's ServiceCIDRConfig), after every event. */
export function serviceCIDRHandler(set: ServiceCIDRSet): ObjectHandler<V1ServiceCIDR> {
  return {
    add: (c) => {
      set.set(c);
      set.flush();
    },
    update: (_prev, cur) => {
      set.set(cur);
      set.flush();
    },
    delete: (c) => {
      set.remove(c);
      set.flush();
    },
    synced: () => set.synced(),
  };
}
