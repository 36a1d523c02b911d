/** The resources the test API server serves: what kube-proxy lists, watches and posts. */
export interface ResourceInfo {
  /** URL segment and store key, e.g. "endpointslices". */
  readonly plural: string;
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export const RESOURCES: readonly ResourceInfo[] = [
  { plural: 'services', group: '', version: 'v1', kind: 'Service', namespaced: true },
  { plural: 'endpointslices', group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', namespaced: true },
  { plural: 'nodes', group: '', version: 'v1', kind: 'Node', namespaced: false },
  { plural: 'servicecidrs', group: 'networking.k8s.io', version: 'v1', kind: 'ServiceCIDR', namespaced: false },
  { plural: 'events', group: 'events.k8s.io', version: 'v1', kind: 'Event', namespaced: true },
  // Older recorders (core/v1 events) post here; accepted and recorded the same way.
  { plural: 'events', group: '', version: 'v1', kind: 'Event', namespaced: true },
];

export function apiVersionOf(r: ResourceInfo): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** A resource identity that keeps the two Event APIs apart in the store. */
export function resourceId(r: ResourceInfo): string {
  return `${apiVersionOf(r)}/${r.plural}`;
}

export function resourceForKind(apiVersion: string | undefined, kind: string | undefined): ResourceInfo | undefined {
  return RESOURCES.find((r) => r.kind === kind && (apiVersion === undefined || apiVersionOf(r) === apiVersion));
}

export interface ParsedPath {
  readonly resource: ResourceInfo;
  /** Set for namespaced paths (`/namespaces/{ns}/...`); undefined for cluster-wide ones. */
  readonly namespace?: string;
  readonly name?: string;
  /**
   * `status` for `…/{name}/status`: a write there changes only the object's status (the rest of the
   * body is ignored), as on the real server; the path kube-proxy's KubeProxyReady condition is patched on.
   */
  readonly subresource?: 'status';
}

/** The kinds served with a status subresource (Node conditions are written there). */
const WITH_STATUS = new Set(['nodes', 'services']);

/**
 * Recognises `/api/v1/[namespaces/{ns}/]{plural}[/{name}[/status]]` and
 * `/apis/{group}/{version}/[namespaces/{ns}/]{plural}[/{name}]`. Anything else is undefined (404).
 */
export function parseResourcePath(pathname: string): ParsedPath | undefined {
  const parts = pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(1);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1];
    rest = parts.slice(2);
  } else {
    return undefined;
  }
  const version = rest[0];
  let tail = rest.slice(1);
  let namespace: string | undefined;
  if (tail[0] === 'namespaces' && tail.length >= 3) {
    namespace = tail[1];
    tail = tail.slice(2);
  }
  const status = tail.length === 3 && tail[2] === 'status' && WITH_STATUS.has(tail[0]!);
  if (tail.length < 1 || (tail.length > 2 && !status)) return undefined;
  const resource = RESOURCES.find((r) => r.group === group && r.version === version && r.plural === tail[0]);
  if (!resource) return undefined;
  if (namespace !== undefined && !resource.namespaced) return undefined;
  return {
    resource,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(tail[1] !== undefined ? { name: tail[1] } : {}),
    ...(status ? { subresource: 'status' as const } : {}),
  };
}
