/**
 * Which lists of the served kinds a strategic merge patch merges instead of replacing, and by which
 * key: the `patchStrategy:"merge"` / `patchMergeKey` struct tags of k8s.io/api, for the fields of
 * Service, EndpointSlice, Node and Event that have them. Every other list is atomic (replaced whole),
 * which is what the tags say for EndpointSlice's `endpoints` and `ports` and Service's `clusterIPs`.
 */

export interface ListStrategy {
  /** Lists of objects merged element by element on this field; undefined for lists of primitives (set union). */
  readonly mergeKey?: string;
}

/** Object metadata lists, common to every kind. */
const METADATA: Readonly<Record<string, ListStrategy>> = {
  'metadata.ownerReferences': { mergeKey: 'uid' },
  'metadata.finalizers': {},
};

const BY_KIND: Readonly<Record<string, Readonly<Record<string, ListStrategy>>>> = {
  // ServiceSpec.Ports: merge by "port" (upstream's known wart: not by port+protocol). Conditions by type.
  Service: { 'spec.ports': { mergeKey: 'port' }, 'status.conditions': { mergeKey: 'type' } },
  // EndpointSlice.Endpoints and .Ports are `+listType=atomic` with no patch strategy: replaced whole.
  EndpointSlice: {},
  Node: {
    'spec.podCIDRs': {},
    'status.addresses': { mergeKey: 'type' },
    'status.conditions': { mergeKey: 'type' },
  },
  Event: {},
};

/** The strategy of the list at `path` (dotted field names, list indices left out) in an object of `kind`. */
export function listStrategy(kind: string | undefined, path: readonly string[]): ListStrategy | undefined {
  const key = path.join('.');
  return METADATA[key] ?? BY_KIND[kind ?? '']?.[key];
}
