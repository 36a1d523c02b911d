import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readDeployDocuments, type ApiObject } from './testing/deploy-documents.js';

/**
 * The grant, one row per (API group, resource): what the proxy calls and where, plus the verb the
 * deploy contract names for parity with upstream's system:node-proxier (issue 14: "nodes get/list/watch,
 * events create/patch") which the code does not use today: PATCH of an event (a repeated event is
 * patched by client-go's recorder). Nothing else: no update, no delete, no core-group events, no
 * secrets, no wildcards; of the Node, only its status subresource is written.
 */
const USED: ReadonlyArray<{ group: string; resource: string; verbs: string[]; why: string }> = [
  { group: '', resource: 'services', verbs: ['list', 'watch'], why: 'Service informer (sources/api/api-source.ts)' },
  { group: '', resource: 'nodes', verbs: ['list', 'watch'], why: 'own-Node informer, fieldSelector metadata.name (api-source.ts)' },
  { group: 'discovery.k8s.io', resource: 'endpointslices', verbs: ['list', 'watch'], why: 'EndpointSlice informer (api-source.ts)' },
  { group: 'networking.k8s.io', resource: 'servicecidrs', verbs: ['list', 'watch'], why: 'ServiceCIDR informer (service-cidr-informer.ts)' },
  { group: 'events.k8s.io', resource: 'events', verbs: ['create'], why: 'Starting and host-setup Warning events, POST (birth-cry.ts)' },
];
/** What the KubeProxyReady condition needs (apps/proxy/src/node/node-status-client.ts). */
const USED_BY_NODE_CONDITION: ReadonlyArray<{ group: string; resource: string; verbs: string[]; why: string }> = [
  { group: '', resource: 'nodes', verbs: ['get'], why: "one GET of the own Node, to keep a previous run's lastTransitionTime" },
  { group: '', resource: 'nodes/status', verbs: ['patch'], why: 'strategic merge PATCH of the KubeProxyReady condition' },
];
const CONTRACT_EXTRAS: ReadonlyArray<{ group: string; resource: string; verbs: string[]; why: string }> = [
  { group: 'events.k8s.io', resource: 'events', verbs: ['patch'], why: 'the deploy contract (upstream node-proxier): events create/patch' },
];
const EXPECTED = [...USED, ...USED_BY_NODE_CONDITION, ...CONTRACT_EXTRAS];

const grants = (rows: ReadonlyArray<{ group: string; resource: string; verbs: readonly string[] }>): string[] =>
  rows.flatMap((r) => r.verbs.map((v) => `${r.group || 'core'}/${r.resource}: ${v}`)).sort();

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const docs = readDeployDocuments().map((d) => d.object);
const byKind = (kind: string): ApiObject => docs.find((o) => o.kind === kind)!;

describe('deploy/rbac.yaml', () => {
  const rules = (byKind('ClusterRole') as ApiObject & { rules: PolicyRule[] }).rules;

  it('grants exactly the least-privilege table above, with no wildcards, names or non-resource URLs', () => {
    const granted = rules.flatMap((r) =>
      (r.apiGroups ?? []).flatMap((group) => (r.resources ?? []).map((resource) => ({ group, resource, verbs: r.verbs }))),
    );
    expect(grants(granted)).toEqual(grants(EXPECTED));
    for (const r of rules) {
      expect(r.resourceNames).toBeUndefined();
      expect(r.nonResourceURLs).toBeUndefined();
      expect([...(r.apiGroups ?? []), ...(r.resources ?? []), ...r.verbs]).not.toContain('*');
    }
  });

  it('binds that ClusterRole to the ServiceAccount the DaemonSet runs as', () => {
    const sa = byKind('ServiceAccount');
    const binding = byKind('ClusterRoleBinding') as ApiObject & { roleRef: unknown; subjects: unknown };
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: byKind('ClusterRole').metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
  });
});

// The drift guard: read the API paths and HTTP methods the source really uses, so a new informer or a
// new write fails here until rbac.yaml (and the table) grant it, and a removed one until they drop it.
const SOURCES = fileURLToPath(new URL('../sources/api', import.meta.url));
const NODE = fileURLToPath(new URL('../node', import.meta.url));

function sourceFiles(dir = SOURCES): Array<{ name: string; text: string }> {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
    .map((f) => ({ name: f, text: stripComments(readFileSync(join(dir, f), 'utf8')) }));
}

function stripComments(ts: string): string {
  return ts.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** "/api/v1/nodes" → core/nodes; "/apis/events.k8s.io/v1/namespaces/default/events" → events.k8s.io/events. */
function resourceOf(path: string): { group: string; resource: string } {
  const parts = path.split('/').filter(Boolean);
  const [group, rest] = parts[0] === 'api' ? ['', parts.slice(2)] : [parts[1]!, parts.slice(3)];
  const resource = rest[0] === 'namespaces' ? rest[2]! : rest[0]!;
  return { group, resource };
}

describe('what apps/proxy/src/sources/api calls', () => {
  const files = sourceFiles();

  it('is only collection GETs (informers) and POSTs, through our own client', () => {
    const methods = new Set(files.flatMap((f) => [...f.text.matchAll(/\.request(?:<[^(]*>)?\(\s*'([A-Z]+)'/g)].map((m) => m[1])));
    expect([...methods].sort()).toEqual(['GET', 'POST']);
    // client-node's generated API classes would call the server without passing through request().
    for (const f of files) expect({ file: f.name, usesGeneratedClient: /makeApiClient\(/.test(f.text) }).toEqual({ file: f.name, usesGeneratedClient: false });
  });

  it('needs exactly what the table grants: list/watch for informed paths, create for POSTed ones', () => {
    const used = files.flatMap((f) => {
      const posts = /\.request(?:<[^(]*>)?\(\s*'POST'/.test(f.text);
      return [...f.text.matchAll(/['"`](\/apis?\/[^'"`\s]+)['"`]/g)].map((m) => ({ ...resourceOf(m[1]!), verbs: posts ? ['create'] : ['list', 'watch'] }));
    });
    expect([...new Set(grants(used))]).toEqual(grants(USED));
  });
});

describe('what apps/proxy/src/node calls (the KubeProxyReady condition)', () => {
  const files = sourceFiles(NODE);

  /**
   * Each `.request('METHOD', '/api…')` call with its path written out: a GET of a named object is `get`,
   * a PATCH is `patch` of the path's resource or subresource (`nodes/status`). `${…}` is a name.
   */
  it('needs exactly nodes get and nodes/status patch, through our own client', () => {
    const calls = files.flatMap((f) => [...f.text.matchAll(/\.request(?:<[^(]*>)?\(\s*'([A-Z]+)',\s*[`'"](\/apis?\/[^`'"\s]+)[`'"]/g)]);
    const used = calls.map((m) => {
      const [method, path] = [m[1]!, m[2]!];
      const parts = path.split('/').filter(Boolean);
      const rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
      const [resource, name, sub] = rest;
      expect({ path, named: name?.startsWith('${') }).toEqual({ path, named: true });
      const verb = method === 'GET' ? 'get' : method === 'PATCH' ? 'patch' : `unexpected ${method}`;
      return { group: parts[0] === 'api' ? '' : parts[1]!, resource: sub ? `${resource}/${sub}` : resource!, verbs: [verb] };
    });
    expect(grants(used)).toEqual(grants(USED_BY_NODE_CONDITION));
    for (const f of files) expect({ file: f.name, usesGeneratedClient: /makeApiClient\(/.test(f.text) }).toEqual({ file: f.name, usesGeneratedClient: false });
  });
});
