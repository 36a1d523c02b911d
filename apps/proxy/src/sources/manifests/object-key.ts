import type { ManifestObject } from './parse-manifests.js';

export type ProxiedKind = 'Service' | 'EndpointSlice' | 'Node';
/** Every kind the proxy reads from manifests; ServiceCIDRs are not objects handlers see one by one. */
export type ManifestKind = ProxiedKind | 'ServiceCIDR';

/** Which apiVersion each kind must carry: the versions the proxy's informers watch. */
const API_VERSIONS: Record<ManifestKind, string> = {
  Service: 'v1',
  EndpointSlice: 'discovery.k8s.io/v1',
  Node: 'v1',
  ServiceCIDR: 'networking.k8s.io/v1',
};

/** Cluster-scoped kinds: keyed by name alone, never given a namespace. */
const CLUSTER_SCOPED: ReadonlySet<ManifestKind> = new Set(['Node', 'ServiceCIDR']);

export function isProxiedKind(kind: ManifestKind | undefined): kind is ProxiedKind {
  return kind === 'Service' || kind === 'EndpointSlice' || kind === 'Node';
}

export type ClassifiedObject =
  | { readonly ok: true; readonly kind: ManifestKind; readonly key: string; readonly object: ManifestObject }
  | { readonly ok: false; readonly ignored: true }
  | { readonly ok: false; readonly ignored: false; readonly error: string; readonly kind?: ManifestKind };

/**
 * Decides whether a manifest object is one the proxy consumes and gives it a stable identity
 * (`kind/namespace/name`, `kind/name` when cluster-scoped). Objects of other kinds (Deployments,
 * ConfigMaps, …) are ignored quietly; a Service/EndpointSlice/Node/ServiceCIDR without a usable name
 * or with the wrong apiVersion is an error to log.
 */
export function classifyObject(obj: ManifestObject): ClassifiedObject {
  const kind = obj.kind;
  if (kind !== 'Service' && kind !== 'EndpointSlice' && kind !== 'Node' && kind !== 'ServiceCIDR') {
    if (typeof kind === 'string') return { ok: false, ignored: true };
    return { ok: false, ignored: false, error: 'object has no "kind"' };
  }
  if (obj.apiVersion !== API_VERSIONS[kind]) {
    return { ok: false, ignored: false, kind, error: `${kind} must have apiVersion ${API_VERSIONS[kind]}, got ${JSON.stringify(obj.apiVersion)}` };
  }
  const md = obj.metadata;
  if (typeof md !== 'object' || md === null || typeof md.name !== 'string' || md.name === '') {
    return { ok: false, ignored: false, kind, error: `${kind} has no metadata.name` };
  }
  if (md.namespace !== undefined && typeof md.namespace !== 'string') {
    return { ok: false, ignored: false, kind, error: `${kind} ${md.name}: metadata.namespace must be a string` };
  }
  if (md.labels !== undefined && (typeof md.labels !== 'object' || md.labels === null || Array.isArray(md.labels))) {
    return { ok: false, ignored: false, kind, error: `${kind} ${md.name}: metadata.labels must be a map` };
  }
  if (CLUSTER_SCOPED.has(kind)) return { ok: true, kind, key: `${kind}/${md.name}`, object: obj };
  // Like kubectl apply, a namespaced object without a namespace lands in "default".
  const namespace = (md.namespace as string | undefined) || 'default';
  const object = md.namespace ? obj : { ...obj, metadata: { ...md, namespace } };
  return { ok: true, kind, key: `${kind}/${namespace}/${md.name}`, object };
}
