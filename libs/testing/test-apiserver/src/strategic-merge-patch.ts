/**
 * Strategic merge patch (`application/strategic-merge-patch+json`), the patch `kubectl apply`
 * (client-side) and `kubectl patch` send for built-in kinds, as far as Services, EndpointSlices,
 * Nodes and Events need it:
 * - objects merge recursively, `null` removes a field;
 * - lists named in patch-strategy.ts merge: lists of objects element by element on their merge key
 *   (an element `{"<key>": …, "$patch": "delete"}` removes one, `{"$patch": "replace"}` in the list
 *   replaces the list), lists of primitives as a set union; every other list is replaced;
 * - directives `$patch: replace|delete|merge` on objects, `$retainKeys`,
 *   `$setElementOrder/<field>` and `$deleteFromPrimitiveList/<field>`.
 * Not implemented: schemas of other kinds (CRDs get merge-patch semantics from kubectl anyway).
 */
import { deepEqual, isJsonObject, PatchError, type Json } from './json.js';
import { listStrategy, type ListStrategy } from './patch-strategy.js';

type JsonObject = { [key: string]: Json };

const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVES = '$deleteFromPrimitiveList/';

export function strategicMergePatch(target: Json, patch: Json, kind: string | undefined): Json {
  if (!isJsonObject(patch)) throw new PatchError('a strategic merge patch must be a JSON object');
  const merged = mergeObject(isJsonObject(target) ? target : {}, patch, [], kind);
  if (merged === undefined) throw new PatchError('$patch: delete of the whole object is not supported');
  return merged;
}

/** Merges `patch` into a copy of `original`; undefined when the patch deletes the object. */
function mergeObject(original: JsonObject, patch: JsonObject, path: readonly string[], kind: string | undefined): JsonObject | undefined {
  const directive = patch['$patch'];
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return withoutDirectives(patch);
  if (directive !== undefined && directive !== 'merge') throw new PatchError(`unknown $patch directive ${JSON.stringify(directive)}`);

  const out: JsonObject = structuredClone(original);
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    if (value === null) {
      delete out[key];
      continue;
    }
    const at = [...path, key];
    const current = out[key];
    if (isJsonObject(value)) {
      const m = mergeObject(isJsonObject(current) ? current : {}, value, at, kind);
      if (m === undefined) delete out[key];
      else out[key] = m;
    } else if (Array.isArray(value)) {
      const strategy = listStrategy(kind, at);
      out[key] = strategy ? mergeList(Array.isArray(current) ? current : [], value, strategy, at, kind) : withoutDirectivesDeep(value);
    } else {
      out[key] = value;
    }
  }

  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(DELETE_PRIMITIVES)) {
      const field = key.slice(DELETE_PRIMITIVES.length);
      const list = out[field];
      if (Array.isArray(list) && Array.isArray(value)) out[field] = list.filter((x) => !value.some((d) => deepEqual(d, x)));
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(SET_ORDER)) {
      const field = key.slice(SET_ORDER.length);
      const list = out[field];
      if (Array.isArray(list) && Array.isArray(value)) out[field] = ordered(list, value, listStrategy(kind, [...path, field])?.mergeKey);
    }
  }
  const retain = patch['$retainKeys'];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(out)) if (!retain.includes(key)) delete out[key];
  }
  return out;
}

function mergeList(original: Json[], patch: Json[], strategy: ListStrategy, path: readonly string[], kind: string | undefined): Json[] {
  if (patch.some((e) => isJsonObject(e) && e['$patch'] === 'replace')) {
    return patch.filter((e) => !(isJsonObject(e) && e['$patch'] === 'replace')).map(withoutDirectivesDeep);
  }
  const key = strategy.mergeKey;
  if (key === undefined) {
    const out = structuredClone(original);
    for (const e of patch) if (!out.some((x) => deepEqual(x, e))) out.push(structuredClone(e));
    return out;
  }
  let out = structuredClone(original);
  for (const e of patch) {
    if (!isJsonObject(e) || !(key in e)) throw new PatchError(`element of ${path.join('.')} lacks its merge key "${key}"`);
    const i = out.findIndex((x) => isJsonObject(x) && deepEqual(x[key], e[key]));
    if (e['$patch'] === 'delete') {
      if (i >= 0) out = out.filter((_, j) => j !== i);
      continue;
    }
    const existing = i >= 0 ? out[i] : undefined;
    const merged = mergeObject(isJsonObject(existing) ? existing : {}, e, path, kind);
    if (merged === undefined) continue;
    if (i >= 0) out[i] = merged;
    else out.push(merged);
  }
  return out;
}

/** `list` reordered: elements named by `order` first, in its order, then the rest as they were. */
function ordered(list: Json[], order: Json[], mergeKey: string | undefined): Json[] {
  const ident = (x: Json): Json | undefined => (mergeKey !== undefined && isJsonObject(x) ? x[mergeKey] : x);
  const rank = (x: Json): number => {
    const i = order.findIndex((o) => deepEqual(ident(o), ident(x)));
    return i < 0 ? order.length : i;
  };
  return list
    .map((x, i) => ({ x, i, r: rank(x) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((e) => e.x);
}

function withoutDirectives(o: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(o)) if (!k.startsWith('$')) out[k] = withoutDirectivesDeep(v);
  return out;
}

function withoutDirectivesDeep(v: Json): Json {
  if (Array.isArray(v)) return v.map(withoutDirectivesDeep);
  return isJsonObject(v) ? withoutDirectives(v) : v;
}
