/**
 * API discovery documents of the test API server, built from RESOURCES, so that a real client
 * (kubectl) can map kinds to resources: `/version`, the legacy `/api` (APIVersions) and `/apis`
 * (APIGroupList), each group `/apis/{group}`, and each group-version's APIResourceList
 * (`/api/v1`, `/apis/{group}/{version}`). When a client asks for aggregated discovery
 * (`Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`, as kubectl 1.26+
 * does first), `/api` and `/apis` answer with an APIGroupDiscoveryList instead, as a 1.30+ server does.
 */
import { RESOURCES, type ResourceInfo } from './resources.js';

/** What `/version` reports; kubectl only reads it (and gcloud's kubectl dispatcher picks a client by it). */
export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-test-apiserver',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;

export const AGGREGATED_DISCOVERY_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** Verbs the server implements for every resource it serves. */
const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] as const;

/** Short names kubectl users type (`kubectl get svc`), as the real server advertises them. */
const SHORT_NAMES: Readonly<Record<string, readonly string[]>> = {
  services: ['svc'],
  nodes: ['no'],
  events: ['ev'],
  namespaces: ['ns'],
};

export interface DiscoveryDocument {
  readonly contentType: string;
  readonly body: unknown;
}

interface GroupVersion {
  readonly group: string;
  readonly version: string;
  readonly resources: readonly ResourceInfo[];
}

function groupVersions(): GroupVersion[] {
  const out: GroupVersion[] = [];
  for (const r of RESOURCES) {
    const gv = out.find((g) => g.group === r.group && g.version === r.version);
    if (gv) (gv.resources as ResourceInfo[]).push(r);
    else out.push({ group: r.group, version: r.version, resources: [r] });
  }
  return out;
}

function singular(r: ResourceInfo): string {
  return r.kind.toLowerCase();
}

function apiResource(r: ResourceInfo): Record<string, unknown> {
  return {
    name: r.plural,
    singularName: singular(r),
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: [...VERBS],
    ...(SHORT_NAMES[r.plural] ? { shortNames: [...(SHORT_NAMES[r.plural] ?? [])] } : {}),
  };
}

function resourceList(gv: GroupVersion): Record<string, unknown> {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: gv.group === '' ? gv.version : `${gv.group}/${gv.version}`,
    resources: gv.resources.map(apiResource),
  };
}

function apiGroup(group: string): Record<string, unknown> {
  const versions = groupVersions()
    .filter((g) => g.group === group)
    .map((g) => ({ groupVersion: `${g.group}/${g.version}`, version: g.version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0] };
}

/** One group of an aggregated discovery list (apidiscovery.k8s.io/v2 APIGroupDiscovery). */
function aggregatedGroup(group: string): Record<string, unknown> {
  return {
    metadata: { name: group, creationTimestamp: null },
    versions: groupVersions()
      .filter((g) => g.group === group)
      .map((g) => ({
        version: g.version,
        freshness: 'Current',
        resources: g.resources.map((r) => ({
          resource: r.plural,
          responseKind: { group: r.group, version: r.version, kind: r.kind },
          scope: r.namespaced ? 'Namespaced' : 'Cluster',
          singularResource: singular(r),
          verbs: [...VERBS],
          ...(SHORT_NAMES[r.plural] ? { shortNames: [...(SHORT_NAMES[r.plural] ?? [])] } : {}),
        })),
      })),
  };
}

function aggregatedList(groups: readonly string[]): Record<string, unknown> {
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items: groups.map(aggregatedGroup) };
}

function namedGroups(): string[] {
  return [...new Set(groupVersions().map((g) => g.group))].filter((g) => g !== '');
}

/** Whether an Accept header asks for aggregated discovery (v2; v2beta1 is answered as v2, which clients also accept first). */
export function wantsAggregated(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => {
    const params = part.split(';').map((p) => p.trim());
    return params.includes('g=apidiscovery.k8s.io') && params.includes('v=v2') && params.includes('as=APIGroupDiscoveryList');
  });
}

/** The discovery document at `pathname`, or undefined when the path is not a discovery path. */
export function discoveryDocument(pathname: string, accept: string | undefined): DiscoveryDocument | undefined {
  const json = (body: unknown): DiscoveryDocument => ({ contentType: 'application/json', body });
  const parts = pathname.split('/').filter((p) => p !== '');
  if (parts.length === 1 && parts[0] === 'version') return json(SERVER_VERSION);
  if (parts.length === 1 && parts[0] === 'api') {
    if (wantsAggregated(accept)) return { contentType: AGGREGATED_DISCOVERY_TYPE, body: aggregatedList(['']) };
    return json({
      kind: 'APIVersions',
      versions: groupVersions()
        .filter((g) => g.group === '')
        .map((g) => g.version),
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }],
    });
  }
  if (parts.length === 1 && parts[0] === 'apis') {
    if (wantsAggregated(accept)) return { contentType: AGGREGATED_DISCOVERY_TYPE, body: aggregatedList(namedGroups()) };
    return json({ kind: 'APIGroupList', apiVersion: 'v1', groups: namedGroups().map(apiGroup) });
  }
  if (parts.length === 2 && parts[0] === 'api') {
    const gv = groupVersions().find((g) => g.group === '' && g.version === parts[1]);
    return gv ? json(resourceList(gv)) : undefined;
  }
  if (parts.length === 2 && parts[0] === 'apis') {
    return namedGroups().includes(parts[1] ?? '') ? json(apiGroup(parts[1] ?? '')) : undefined;
  }
  if (parts.length === 3 && parts[0] === 'apis') {
    const gv = groupVersions().find((g) => g.group === parts[1] && g.version === parts[2]);
    return gv ? json(resourceList(gv)) : undefined;
  }
  return undefined;
}

/** `group/version` of every group-version served, core first ("v1"). */
export function servedGroupVersions(): Array<{ group: string; version: string; resources: readonly ResourceInfo[] }> {
  return groupVersions().map((g) => ({ ...g }));
}
