import type { EndpointSliceHandler, NodeHandler, ServiceHandler, V1EndpointSlice, V1Node, V1Service } from '@kube-proxy/core';

/** The handlers a source feeds (the ones the store records). */
export interface ObjectHandlers {
  readonly services: ServiceHandler;
  readonly endpointSlices: EndpointSliceHandler;
  readonly node: NodeHandler;
}

function keyOf(obj: { metadata?: { namespace?: string; name?: string } }): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/**
 * The Services, EndpointSlices and Node a run currently holds, as its source delivered them (after
 * validation): what `explain` and /debug/explain explain. The proxier keeps only what it needs to
 * program rules, not the objects, so the store listens to the same events beside it.
 */
export class ObjectStore {
  private readonly serviceMap = new Map<string, V1Service>();
  private readonly sliceMap = new Map<string, V1EndpointSlice>();
  private current: V1Node | undefined;

  service(namespacedName: string): V1Service | undefined {
    return this.serviceMap.get(namespacedName);
  }

  services(): V1Service[] {
    return [...this.serviceMap.values()];
  }

  endpointSlices(): V1EndpointSlice[] {
    return [...this.sliceMap.values()];
  }

  node(): V1Node | undefined {
    return this.current;
  }

  /**
   * `handlers`, each of which also records into this store (before forwarding). With `objects: false`
   * (no /debug/explain can ask: a dry run without a metrics server) only the Node is recorded, so the
   * decoded Services and EndpointSlices (~20 MB at 10k) are not held for nothing.
   */
  tap<H extends ObjectHandlers>(handlers: H, opts: { readonly objects?: boolean } = {}): H {
    const { services, endpointSlices, node } = handlers;
    const nodeOnly = { ...handlers, node: this.tapNode(node) };
    if (opts.objects === false) return nodeOnly;
    return {
      ...nodeOnly,
      services: {
        onServiceAdd: (s: V1Service) => (this.serviceMap.set(keyOf(s), s), services.onServiceAdd(s)),
        onServiceUpdate: (p: V1Service, c: V1Service) => (this.serviceMap.set(keyOf(c), c), services.onServiceUpdate(p, c)),
        onServiceDelete: (s: V1Service) => (this.serviceMap.delete(keyOf(s)), services.onServiceDelete(s)),
        onServicesSynced: () => services.onServicesSynced(),
      },
      endpointSlices: {
        onEndpointSliceAdd: (s: V1EndpointSlice) => (this.sliceMap.set(keyOf(s), s), endpointSlices.onEndpointSliceAdd(s)),
        onEndpointSliceUpdate: (p: V1EndpointSlice, c: V1EndpointSlice) => (this.sliceMap.set(keyOf(c), c), endpointSlices.onEndpointSliceUpdate(p, c)),
        onEndpointSliceDelete: (s: V1EndpointSlice) => (this.sliceMap.delete(keyOf(s)), endpointSlices.onEndpointSliceDelete(s)),
        onEndpointSlicesSynced: () => endpointSlices.onEndpointSlicesSynced(),
      },
    };
  }

  private tapNode(node: NodeHandler): NodeHandler {
    return {
      onNodeAdd: (n: V1Node) => ((this.current = n), node.onNodeAdd(n)),
      onNodeUpdate: (p: V1Node, c: V1Node) => ((this.current = c), node.onNodeUpdate(p, c)),
      onNodeDelete: (n: V1Node) => ((this.current = undefined), node.onNodeDelete(n)),
      onNodeSynced: () => node.onNodeSynced(),
    };
  }
}
