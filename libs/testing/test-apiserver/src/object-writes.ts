/**
 * What the API server does with a write request before it commits it, for create (POST), replace
 * (PUT) and patch (PATCH): the path's namespace wins, fields are validated (`?fieldValidation`),
 * defaults are filled in, a `metadata.resourceVersion` in the body is a precondition (409 Conflict
 * when stale), and a patch that changes nothing commits nothing (no new resourceVersion, no watch
 * event). The store commits; this module only decides.
 */
import { withDefaults } from './defaults.js';
import { validateFields } from './field-validation.js';
import { deepEqual, isJsonObject, PatchError, type Json } from './json.js';
import { StoreError, type KubeObject, type ObjectStore } from './object-store.js';
import { applyPatch } from './patch.js';
import type { ParsedPath } from './resources.js';

export interface WriteRequest {
  readonly target: ParsedPath;
  /** The request body as parsed JSON (POST/PUT) or text (PATCH). */
  readonly body: unknown;
  readonly fieldValidation: string | null;
}

/** The body as an object in the path's namespace; SyntaxError (400) for anything but a JSON object. */
function inPathNamespace(body: unknown, target: ParsedPath): KubeObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SyntaxError('request body must be a JSON object');
  const obj = body as KubeObject;
  if (target.namespace === undefined) return obj;
  return { ...obj, metadata: { ...obj.metadata, namespace: target.namespace } };
}

/** Optimistic concurrency: a write naming a resourceVersion other than the stored one is a 409 Conflict. */
function checkResourceVersion(store: ObjectStore, target: ParsedPath, name: string, obj: KubeObject): void {
  const want = obj.metadata?.resourceVersion;
  if (want === undefined || want === '') return;
  const current = store.get(target.resource, target.namespace, name);
  if (current && current.metadata?.resourceVersion !== want) {
    throw new StoreError(
      `Operation cannot be fulfilled on ${target.resource.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      409,
      'Conflict',
    );
  }
}

/** Equal apart from metadata.resourceVersion (which the server owns). */
function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): Json => {
    const { resourceVersion: _rv, ...meta } = o.metadata ?? {};
    return { ...o, metadata: meta } as Json;
  };
  return deepEqual(strip(a), strip(b));
}

export function createObject(store: ObjectStore, w: WriteRequest): KubeObject {
  const kind = w.target.resource.kind;
  const obj = inPathNamespace(w.body, w.target);
  validateFields(kind, obj, w.fieldValidation);
  return store.create(w.target.resource, withDefaults(kind, obj));
}

export function replaceObject(store: ObjectStore, w: WriteRequest, name: string): KubeObject {
  const kind = w.target.resource.kind;
  const body = inPathNamespace(w.body, w.target);
  const current = w.target.subresource === 'status' ? store.get(w.target.resource, w.target.namespace, name) : undefined;
  if (w.target.subresource === 'status' && !current) throw new StoreError(`${w.target.resource.plural} "${name}" not found`, 404, 'NotFound');
  const obj = current ? { ...statusOnly(current, body), metadata: { ...current.metadata, ...(body.metadata?.resourceVersion ? { resourceVersion: body.metadata.resourceVersion } : {}) } } : body;
  if (obj.metadata?.name !== undefined && obj.metadata.name !== name) throw new SyntaxError(`metadata.name "${obj.metadata.name}" does not match the path ("${name}")`);
  validateFields(kind, obj, w.fieldValidation);
  checkResourceVersion(store, w.target, name, obj);
  return store.update(w.target.resource, withDefaults(kind, { ...obj, metadata: { ...obj.metadata, name } }));
}

/** What a write to the status subresource commits: the stored object with only the new status. */
function statusOnly(current: KubeObject, written: KubeObject): KubeObject {
  const { status } = written as KubeObject & { status?: unknown };
  const { status: _old, ...rest } = current as KubeObject & { status?: unknown };
  return (status === undefined ? rest : { ...rest, status }) as KubeObject;
}

/**
 * The patch (by Content-Type) applied to the stored object; undefined when there is no such object.
 * On the status subresource only the patched status is kept (a Node condition patch merges by type).
 */
export function patchObject(store: ObjectStore, w: WriteRequest, name: string, contentType: string | undefined): KubeObject | undefined {
  const kind = w.target.resource.kind;
  const current = store.get(w.target.resource, w.target.namespace, name);
  if (!current) return undefined;
  const text = typeof w.body === 'string' ? w.body : '';
  const patched = applyPatch(contentType, current as Json, JSON.parse(text === '' ? '{}' : text) as Json, kind);
  if (!isJsonObject(patched)) throw new PatchError('the patched object is not a JSON object');
  const obj = w.target.subresource === 'status' ? statusOnly(current, patched as KubeObject) : (patched as KubeObject);
  if (obj.metadata?.name !== name) throw new PatchError(`a patch may not change metadata.name (${JSON.stringify(obj.metadata?.name)} ≠ "${name}")`);
  validateFields(kind, obj, w.fieldValidation);
  // A patch that carries metadata.resourceVersion is a precondition, as on the real server.
  checkResourceVersion(store, w.target, name, obj);
  const next = withDefaults(kind, inPathNamespace(obj, w.target));
  if (sameContent(current, next)) return current;
  return store.update(w.target.resource, next);
}
