/**
 * The API source's own modules (apps/proxy/src/sources), imported from the app's package entry points
 * (`@kube-proxy/proxy/sources/...`), so the benchmark runs the proxy's real decode trimming,
 * informer-to-handler adapter and validation layer rather than copies. The shapes used here are
 * declared locally and the compiler checks the app's modules against them.
 */
import type { KubernetesListObject, KubernetesObject, V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { EndpointSliceHandler, Logger, NodeHandler, ServiceHandler } from '@kube-proxy/core';
import { HandlerAdapter } from '@kube-proxy/proxy/sources/api/handler-adapter';
import { endpointSliceHandler, nodeHandler, serviceHandler } from '@kube-proxy/proxy/sources/api/resource-handlers';
import { trimObject, withTypeMeta } from '@kube-proxy/proxy/sources/api/trim-object';
import { ObjectValidation } from '@kube-proxy/proxy/sources/validating-handlers';

/** apps/proxy/src/sources/api/handler-adapter.ts ObjectHandler. */
export interface ObjectHandler<T> {
  add(obj: T): void;
  update(previous: T, current: T): void;
  delete(obj: T): void;
  synced(): void;
}

/** apps/proxy/src/sources/api/handler-adapter.ts HandlerAdapter (the informer's events side). */
export interface HandlerAdapterLike<T> {
  attach(handler: ObjectHandler<T>): void;
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  listed(objects: readonly T[]): void;
  readonly size: number;
}

/** apps/proxy/src/sources/manifests/manifest-source.ts ManifestHandlers: what a source's start() takes. */
export interface SourceHandlers {
  readonly services: ServiceHandler;
  readonly endpointSlices: EndpointSliceHandler;
  readonly node: NodeHandler;
}

export interface ProxySourceModules {
  trimObject<T extends KubernetesObject>(obj: T, kind: string): T;
  withTypeMeta<T extends KubernetesObject>(list: KubernetesListObject<T>): T[];
  HandlerAdapter: new <T extends KubernetesObject>(kind: string, logger: Logger) => HandlerAdapterLike<T>;
  serviceHandler(h: ServiceHandler): ObjectHandler<V1Service>;
  endpointSliceHandler(h: EndpointSliceHandler): ObjectHandler<V1EndpointSlice>;
  nodeHandler(h: NodeHandler): ObjectHandler<V1Node>;
  ObjectValidation: new (logger: Logger) => { wrap(handlers: SourceHandlers): SourceHandlers };
}

export async function loadProxySource(): Promise<ProxySourceModules> {
  return { trimObject, withTypeMeta, HandlerAdapter, serviceHandler, endpointSliceHandler, nodeHandler, ObjectValidation };
}
