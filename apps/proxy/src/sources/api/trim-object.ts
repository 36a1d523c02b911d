/**
 * Drops, at decode, the parts of API objects that kube-proxy neither reads nor validates, before the
 * informer caches them: every cached object is held until it changes, and at 10,000 Services ×
 * EndpointSlices a real API server's objects carry kilobytes each the proxy never looks at
 * (managedFields alone is often most of an object). What stays is everything the handlers, the
 * validation (libs/core/src/validation) and core read: name, namespace, uid, resourceVersion,
 * labels and annotations (validated for size and form), deletionTimestamp, spec, a Service's
 * status.loadBalancer, a Node's status.addresses, an EndpointSlice's endpoints without targetRef.
 * The object keeps its identity and resourceVersion, so the informer's update/delete/relist
 * semantics are untouched. Objects are trimmed in place: they were just decoded and are not shared.
 */
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';

/** Metadata fields nothing in the proxy reads (the object-meta validation skips them too). */
const UNUSED_METADATA = ['managedFields', 'ownerReferences', 'finalizers', 'generateName', 'selfLink', 'creationTimestamp', 'generation'] as const;

/** Node status fields nothing in the proxy reads (it uses status.addresses only). */
const UNUSED_NODE_STATUS = ['images', 'volumesInUse', 'volumesAttached', 'nodeInfo', 'capacity', 'allocatable', 'daemonEndpoints', 'config', 'conditions', 'features', 'runtimeHandlers'] as const;

type Loose = Record<string, unknown>;

const isRecord = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Trims `obj` in place (see the module comment) and returns it. `kind` is the informer's kind. */
export function trimObject<T extends KubernetesObject>(obj: T, kind: string): T {
  if (!isRecord(obj)) return obj;
  const meta = (obj as Loose)['metadata'];
  if (isRecord(meta)) for (const f of UNUSED_METADATA) delete meta[f];
  const status = (obj as Loose)['status'];
  if (kind === 'Service' && isRecord(status)) {
    for (const f of Object.keys(status)) if (f !== 'loadBalancer') delete status[f];
  } else if (kind === 'Node' && isRecord(status)) {
    for (const f of UNUSED_NODE_STATUS) delete status[f];
  } else if (kind === 'EndpointSlice') {
    const endpoints = (obj as Loose)['endpoints'];
    if (Array.isArray(endpoints)) for (const ep of endpoints) if (isRecord(ep)) delete ep['targetRef'];
  }
  return obj;
}

/**
 * List items come without apiVersion/kind (the List carries them) while watch events include them;
 * handlers get the same shape from both paths. Items are trimmed to what the proxy reads (trimObject above).
 */
export function withTypeMeta<T extends KubernetesObject>(list: KubernetesListObject<T>): T[] {
  const items = Array.isArray(list.items) ? list.items : [];
  const kind = list.kind?.endsWith('List') ? list.kind.slice(0, -'List'.length) : undefined;
  if (!kind) return items.map((i) => trimObject(i, i.kind ?? ''));
  return items.map((i) => trimObject(i.kind ? i : { apiVersion: list.apiVersion, kind, ...i }, i.kind ?? kind));
}
