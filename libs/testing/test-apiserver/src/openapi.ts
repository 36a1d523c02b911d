/**
 * The OpenAPI v3 documents kubectl reads before it writes: `/openapi/v3` (the index of group-versions)
 * and `/openapi/v3/{api/v1 | apis/{group}/{version}}`. kubectl 1.32 uses them to find out whether the
 * server validates fields itself (a `fieldValidation` query parameter on the kind's PATCH operation);
 * with that it sends `fieldValidation=Strict` and skips client-side schema validation, which would
 * need the full schemas. So each path is declared with its operations, parameters and patch media
 * types, and `components.schemas` holds no schema (kubectl then computes strategic merge patches from
 * the Go types it has built in). `/openapi/v2` is not served (404): kubectl only falls back to it.
 */
import { createHash } from 'node:crypto';
import { servedGroupVersions } from './discovery.js';
import { PATCH_CONTENT_TYPES } from './patch.js';
import type { ResourceInfo } from './resources.js';

const WRITE_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation'].map((name) => ({
  name,
  in: 'query',
  schema: { type: 'string', uniqueItems: true },
}));

function gvk(r: ResourceInfo): Record<string, string> {
  return { group: r.group, version: r.version, kind: r.kind };
}

function op(r: ResourceInfo, action: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    operationId: `${action}${r.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk(r),
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } } },
    ...extra,
  };
}

function body(types: readonly string[]): Record<string, unknown> {
  return { required: true, content: Object.fromEntries(types.map((t) => [t, { schema: { type: 'object' } }])) };
}

function paths(prefix: string, r: ResourceInfo): Record<string, unknown> {
  const collection = r.namespaced ? `${prefix}/namespaces/{namespace}/${r.plural}` : `${prefix}/${r.plural}`;
  return {
    [collection]: {
      get: op(r, 'list'),
      post: op(r, 'post', { parameters: WRITE_PARAMS, requestBody: body(['application/json']) }),
    },
    [`${collection}/{name}`]: {
      get: op(r, 'get'),
      put: op(r, 'put', { parameters: WRITE_PARAMS, requestBody: body(['application/json']) }),
      patch: op(r, 'patch', { parameters: [...WRITE_PARAMS, { name: 'force', in: 'query', schema: { type: 'boolean' } }], requestBody: body(PATCH_CONTENT_TYPES) }),
      delete: op(r, 'delete'),
    },
  };
}

interface GvDoc {
  readonly key: string;
  readonly doc: Record<string, unknown>;
  readonly hash: string;
}

function documents(): GvDoc[] {
  return servedGroupVersions().map((gv) => {
    const prefix = gv.group === '' ? `/api/${gv.version}` : `/apis/${gv.group}/${gv.version}`;
    const doc = {
      openapi: '3.0.0',
      info: { title: 'Kubernetes (test API server)', version: 'v1.32.0' },
      paths: Object.assign({}, ...gv.resources.map((r) => paths(prefix, r))),
      components: { schemas: {} },
    };
    const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 64).toUpperCase();
    return { key: prefix.slice(1), doc, hash };
  });
}

/** The document at `pathname` under /openapi/v3, or undefined (404). */
export function openApiDocument(pathname: string): unknown {
  const docs = documents();
  const rest = pathname.replace(/^\/openapi\/v3\/?/, '');
  if (!pathname.startsWith('/openapi/v3')) return undefined;
  if (rest === '') return { paths: Object.fromEntries(docs.map((d) => [d.key, { serverRelativeURL: `/openapi/v3/${d.key}?hash=${d.hash}` }])) };
  return docs.find((d) => d.key === rest)?.doc;
}
