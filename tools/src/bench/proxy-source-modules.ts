/**
 * The API source's own modules (apps/proxy/src/sources), loaded from the built app so the benchmark
 * runs the proxy's real decode trimming, informer-to-handler adapter and validation layer rather
 * than copies. tools cannot depend on the app at build time (the app depends on tools for its
 * tests), so they are imported from apps/proxy/dist at run time, with the shapes used here
 * declared locally and checked on load: build the app first (the nx target does).
 */
import type { KubernetesListObject, KubernetesObject, V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { EndpointSliceHandler, Logger, NodeHandler, ServiceHandler } from '@kube-proxy/core';

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

const DIST = new URL('../../../apps/proxy/dist/sources/', import.meta.url);

async function load(path: string, names: readonly string[]): Promise<Record<string, unknown>> {
  const url = new URL(path, DIST);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url.href)) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`cannot load ${url.pathname} (build the proxy app first: npx nx build proxy): ${(err as Error).message}`);
  }
  for (const name of names) if (typeof mod[name] !== 'function') throw new Error(`${url.pathname} no longer exports ${name}()`);
  return mod;
}

export async function loadProxySource(): Promise<ProxySourceModules> {
  const [trim, adapter, handlers, validation] = await Promise.all([
    load('api/trim-object.js', ['trimObject', 'withTypeMeta']),
    load('api/handler-adapter.js', ['HandlerAdapter']),
    load('api/resource-handlers.js', ['serviceHandler', 'endpointSliceHandler', 'nodeHandler']),
    load('validating-handlers.js', ['ObjectValidation']),
  ]);
  return { ...trim, ...adapter, ...handlers, ...validation } as unknown as ProxySourceModules;
}
