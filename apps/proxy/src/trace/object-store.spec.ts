import type { EndpointSliceHandler, NodeHandler, ServiceHandler, V1EndpointSlice, V1Node, V1Service } from '@kube-proxy/core';
import { ObjectStore } from './object-store.js';

function handlers(events: string[]): { services: ServiceHandler; endpointSlices: EndpointSliceHandler; node: NodeHandler } {
  return {
    services: {
      onServiceAdd: (s) => void events.push(`svc+ ${s.metadata?.name}`),
      onServiceUpdate: (_p, c) => void events.push(`svc~ ${c.metadata?.name}`),
      onServiceDelete: (s) => void events.push(`svc- ${s.metadata?.name}`),
      onServicesSynced: () => void events.push('svc synced'),
    },
    endpointSlices: {
      onEndpointSliceAdd: (s) => void events.push(`eps+ ${s.metadata?.name}`),
      onEndpointSliceUpdate: (_p, c) => void events.push(`eps~ ${c.metadata?.name}`),
      onEndpointSliceDelete: (s) => void events.push(`eps- ${s.metadata?.name}`),
      onEndpointSlicesSynced: () => void events.push('eps synced'),
    },
    node: {
      onNodeAdd: (n) => void events.push(`node+ ${n.metadata?.name}`),
      onNodeUpdate: (_p, c) => void events.push(`node~ ${c.metadata?.name}`),
      onNodeDelete: (n) => void events.push(`node- ${n.metadata?.name}`),
      onNodeSynced: () => void events.push('node synced'),
    },
  };
}

const service = { metadata: { namespace: 'default', name: 'web' } } as V1Service;
const slice = { metadata: { namespace: 'default', name: 'web-1' } } as V1EndpointSlice;
const node = { metadata: { name: 'node-1' } } as V1Node;

function feed(h: ReturnType<typeof handlers>): void {
  h.services.onServiceAdd(service);
  h.endpointSlices.onEndpointSliceAdd(slice);
  h.node.onNodeAdd(node);
}

describe('ObjectStore.tap', () => {
  it('records every object and forwards every event', () => {
    const events: string[] = [];
    const store = new ObjectStore();
    feed(store.tap(handlers(events)));
    expect(events).toEqual(['svc+ web', 'eps+ web-1', 'node+ node-1']);
    expect(store.service('default/web')).toBe(service);
    expect(store.endpointSlices()).toEqual([slice]);
    expect(store.node()).toBe(node);
  });

  it('with objects false records only the Node, and forwards the same events', () => {
    const events: string[] = [];
    const store = new ObjectStore();
    feed(store.tap(handlers(events), { objects: false }));
    expect(events).toEqual(['svc+ web', 'eps+ web-1', 'node+ node-1']);
    expect(store.services()).toEqual([]);
    expect(store.endpointSlices()).toEqual([]);
    expect(store.node()).toBe(node);
  });
});
