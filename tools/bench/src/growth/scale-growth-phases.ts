/**
 * The phases of the proxy's startup, cut where the real code can be cut, for the scale-growth
 * benchmark. What runs is the app's and the libraries' own code, in the app's order:
 *  - decode: the list response's bytes → JSON.parse → type meta and trim per item, as
 *    ResourceInformer.fetchList does (apps/proxy/src/sources/api/kube-api.ts, resource-informer.ts);
 *  - handlers (source): client-node's ListWatch cache → the source's HandlerAdapter → the app's
 *    ObjectValidation (validate, keep the delivered version) → the handler calls the Provider gets;
 *  - handlers (ProxyState): those calls into core's ProxyState, whose on*Add is where the change
 *    trackers record pending changes (ServiceChangeTracker.update, EndpointSliceCache.updatePending:
 *    a Service's ports and a slice's endpoints are parsed here, not at apply);
 *  - trackers: ProxyState.applyPendingChanges, the pending changes into the service and endpoints maps;
 *  - render: renderRuleset of the full first sync, and the payload text the proxier hands to restore;
 *  - apply: iptables-legacy-restore of that payload in a fresh network namespace, then what the
 *    proxier does after a successful restore (commit the chain memo, release the render buffers).
 * The real app runs the two handler steps as one synchronous chain per object; here the source's
 * calls are recorded and then replayed into ProxyState, so each side's cost is its own.
 */
import { ListWatch, type KubernetesListObject, type KubernetesObject, type V1EndpointSlice, type V1Service, type Watch } from '@kubernetes/client-node';
import { ProxyState, nullLogger, type EndpointSliceHandler, type NodeHandler, type ServiceHandler } from '@kube-proxy/core';
import { AppliedChainMemo, ChainNameCache, renderRuleset, type RenderOptions, type RenderResult } from '@kube-proxy/backend-iptables/internal';
import type { RestoreNamespace } from '../common/netns-restore.js';
import type { HandlerAdapterLike, ProxySourceModules, SourceHandlers } from '../common/proxy-source-modules.js';
import { BENCH_RENDER_OPTIONS } from '../common/bench-render-options.js';

export const NODE_NAME = 'node-0';

/** The iptables options of an IPv4 node in the cluster scale-cluster.ts describes (as iptables-sync.bench.ts). */
export const RENDER_OPTIONS: RenderOptions = BENCH_RENDER_OPTIONS;

export type DecodedList<T extends KubernetesObject> = KubernetesListObject<T>;

/**
 * One list response as ResourceInformer.fetchList hands it to ListWatch: KubeApi.request's
 * `JSON.parse(text)` of the concatenated body, then the app's withTypeMeta (items get the List's
 * apiVersion/kind, as watch events carry them, and are trimmed with trimObject).
 */
export function decodeList<T extends KubernetesObject>(body: Buffer, source: Pick<ProxySourceModules, 'withTypeMeta'>): DecodedList<T> {
  const list = JSON.parse(body.toString('utf8')) as DecodedList<T>;
  return { ...list, items: source.withTypeMeta(list) };
}

/**
 * What the Provider was called with, kept compactly (two arrays of references: the objects are the
 * informer caches' own) so the recording adds next to nothing to the source side's memory. The
 * Service informer's list is delivered whole before the EndpointSlice informer's, so the replay order
 * (services, synced, slices, synced) is the delivered order.
 */
export interface RecordedCalls {
  readonly services: V1Service[];
  readonly slices: V1EndpointSlice[];
  servicesSynced: boolean;
  slicesSynced: boolean;
  /** Anything but an add or synced (a startup list must produce none). */
  readonly other: string[];
}

/** Stands where the Provider does and keeps every call, to be replayed into ProxyState. */
function recordingHandlers(calls: RecordedCalls): SourceHandlers {
  const other = (what: string) => () => void calls.other.push(what);
  const services: ServiceHandler = {
    onServiceAdd: (obj) => void calls.services.push(obj),
    onServiceUpdate: other('serviceUpdate'),
    onServiceDelete: other('serviceDelete'),
    onServicesSynced: () => void (calls.servicesSynced = true),
  };
  const endpointSlices: EndpointSliceHandler = {
    onEndpointSliceAdd: (obj) => void calls.slices.push(obj),
    onEndpointSliceUpdate: other('sliceUpdate'),
    onEndpointSliceDelete: other('sliceDelete'),
    onEndpointSlicesSynced: () => void (calls.slicesSynced = true),
  };
  const node: NodeHandler = { onNodeAdd: other('nodeAdd'), onNodeUpdate: other('nodeUpdate'), onNodeDelete: other('nodeDelete'), onNodeSynced: () => undefined };
  return { services, endpointSlices, node };
}

/**
 * A Watch that opens nothing: the list has been delivered when ListWatch asks for the watch, which
 * is where the real InformerWatch's beforeWatch hook hands the whole cache to the adapter (listed).
 */
function listOnlyWatch(onBeforeWatch: () => void): Watch {
  return { watch: async () => (onBeforeWatch(), new AbortController()) } as unknown as Watch;
}

/** One informer's initial list through client-node's ListWatch into the source's adapter. */
async function deliverList<T extends KubernetesObject>(path: string, list: DecodedList<T>, adapter: HandlerAdapterLike<T>): Promise<ListWatch<T>> {
  let lw: ListWatch<T> | undefined = undefined;
  const watch = listOnlyWatch(() => adapter.listed(lw!.list()));
  lw = new ListWatch<T>(path, watch, () => Promise.resolve(list), false);
  lw.on('add', (o) => adapter.add(o));
  lw.on('update', (o) => adapter.update(o));
  lw.on('delete', (o) => adapter.delete(o));
  await lw.start();
  return lw;
}

/** What the source side keeps alive (as the running proxy does): informer caches, adapters, validation. */
export interface SourceSide {
  readonly caches: readonly ListWatch<KubernetesObject>[];
  readonly adapters: readonly HandlerAdapterLike<KubernetesObject>[];
  readonly calls: RecordedCalls;
}

/** ApiSource.start, for the Service and EndpointSlice informers: adapters attached first, then the lists. */
export async function runSourceHandlers(source: ProxySourceModules, services: DecodedList<V1Service>, slices: DecodedList<V1EndpointSlice>): Promise<SourceSide> {
  const calls: RecordedCalls = { services: [], slices: [], servicesSynced: false, slicesSynced: false, other: [] };
  const validation = new source.ObjectValidation(nullLogger);
  const handlers = validation.wrap(recordingHandlers(calls));
  const serviceAdapter = new source.HandlerAdapter<V1Service>('Service', nullLogger);
  const sliceAdapter = new source.HandlerAdapter<V1EndpointSlice>('EndpointSlice', nullLogger);
  serviceAdapter.attach(source.serviceHandler(handlers.services));
  sliceAdapter.attach(source.endpointSliceHandler(handlers.endpointSlices));
  const svcCache = await deliverList('/api/v1/services', services, serviceAdapter);
  const sliceCache = await deliverList('/apis/discovery.k8s.io/v1/endpointslices', slices, sliceAdapter);
  if (calls.other.length > 0) throw new Error(`the source delivered ${calls.other.length} calls other than adds (first: ${calls.other[0]})`);
  if (calls.services.length !== services.items.length || calls.slices.length !== slices.items.length) {
    throw new Error(`validation refused objects: ${calls.services.length}/${services.items.length} Services, ${calls.slices.length}/${slices.items.length} slices delivered`);
  }
  if (!calls.servicesSynced || !calls.slicesSynced) throw new Error('the source did not deliver both synced calls');
  return {
    caches: [svcCache, sliceCache] as unknown as ListWatch<KubernetesObject>[],
    adapters: [serviceAdapter, sliceAdapter] as unknown as HandlerAdapterLike<KubernetesObject>[],
    calls,
  };
}

/**
 * The recorded calls into a fresh ProxyState, as ProxierBase forwards them (its metrics aside), in
 * the delivered order. The recording is emptied afterwards: the real chain keeps no such list.
 */
export function runStateHandlers(calls: RecordedCalls): ProxyState {
  const state = new ProxyState({ family: 'IPv4', nodeName: NODE_NAME, logger: nullLogger, onChange: () => undefined });
  for (const s of calls.services) state.onServiceAdd(s);
  if (calls.servicesSynced) state.onServicesSynced();
  for (const s of calls.slices) state.onEndpointSliceAdd(s);
  if (calls.slicesSynced) state.onEndpointSlicesSynced();
  calls.services.length = 0;
  calls.slices.length = 0;
  if (!state.isInitialized()) throw new Error('ProxyState did not see both synced calls');
  return state;
}

export interface Rendered {
  readonly result: RenderResult;
  readonly names: ChainNameCache;
  readonly memo: AppliedChainMemo;
  /** The text handed to iptables-restore (the proxier passes `result.payload`). */
  readonly payload: string;
}

/**
 * The proxier's first sync: a full render with a cold chain-name cache and an empty memo; the nat
 * table of a fresh node has no chains, which is what its iptables-save read gives.
 */
export function runRender(state: ProxyState): Rendered {
  const names = new ChainNameCache();
  const memo = new AppliedChainMemo();
  const result = renderRuleset(
    { serviceMap: state.serviceMap, endpointsMap: state.endpointsMap, changedServices: null, existingNatChains: new Set(), appliedChains: memo },
    RENDER_OPTIONS,
    names,
  );
  return { result, names, memo, payload: result.payload };
}

/** `-A` lines of the payload's nat section: what iptables-save must show after the restore. */
export function natRuleLines(payload: string): number {
  const start = payload.indexOf('*nat\n');
  if (start < 0) return 0;
  const end = payload.indexOf('\nCOMMIT\n', start);
  let n = 0;
  for (let i = payload.indexOf('\n-A ', start); i >= 0 && (end < 0 || i < end); i = payload.indexOf('\n-A ', i + 1)) n++;
  return n;
}

/** The restore, checked against the kernel's table, and the proxier's bookkeeping after it. */
export async function runApply(rendered: Rendered, ns: RestoreNamespace): Promise<{ restoreMs: number }> {
  const restoreMs = await ns.restore(rendered.result.payloadBytes);
  if (restoreMs === null) throw new Error('iptables-legacy-restore did not finish within its limit');
  finishSync(rendered);
  return { restoreMs };
}

/** What IptablesProxier.syncOnce does once restore succeeded: the memo learns the tables, buffers go back. */
export function finishSync(rendered: Rendered): void {
  if (rendered.result.appliedChainUpdate !== null) rendered.memo.commit(rendered.result.appliedChainUpdate);
  rendered.names.renderBuffers.release();
}
