/**
 * JSON patch (RFC 6902, `application/json-patch+json`, `kubectl patch --type=json`): a list of
 * add/remove/replace/move/copy/test operations on JSON pointers (RFC 6901). Applied to a copy; any
 * failing operation rejects the whole patch (PatchError).
 */
import { deepEqual, isJsonObject, PatchError, type Json } from './json.js';

interface Operation {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  readonly value?: Json;
}

function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The container holding the pointer's last token, and that token. */
function parentOf(doc: Json, pointer: string): { parent: Json[] | { [k: string]: Json }; key: string } {
  const t = tokens(pointer);
  if (t.length === 0) throw new PatchError('the root cannot be the target of this operation');
  let cur: Json = doc;
  for (const part of t.slice(0, -1)) {
    const next: Json | undefined = Array.isArray(cur) ? cur[Number(part)] : isJsonObject(cur) ? cur[part] : undefined;
    if (next === undefined) throw new PatchError(`path ${pointer} does not exist`);
    cur = next;
  }
  if (!Array.isArray(cur) && !isJsonObject(cur)) throw new PatchError(`path ${pointer} is not inside an object or array`);
  return { parent: cur, key: t[t.length - 1] ?? '' };
}

function get(doc: Json, pointer: string): Json {
  if (pointer === '') return doc;
  const { parent, key } = parentOf(doc, pointer);
  const v = Array.isArray(parent) ? parent[index(parent, key, false)] : parent[key];
  if (v === undefined) throw new PatchError(`path ${pointer} does not exist`);
  return v;
}

function index(arr: Json[], key: string, forInsert: boolean): number {
  if (forInsert && key === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(key)) throw new PatchError(`invalid array index ${JSON.stringify(key)}`);
  const i = Number(key);
  if (i > arr.length || (!forInsert && i === arr.length)) throw new PatchError(`array index ${i} out of range`);
  return i;
}

function add(doc: Json, pointer: string, value: Json): Json {
  if (pointer === '') return value;
  const { parent, key } = parentOf(doc, pointer);
  if (Array.isArray(parent)) parent.splice(index(parent, key, true), 0, value);
  else parent[key] = value;
  return doc;
}

function remove(doc: Json, pointer: string): Json {
  const { parent, key } = parentOf(doc, pointer);
  if (Array.isArray(parent)) parent.splice(index(parent, key, false), 1);
  else {
    if (!(key in parent)) throw new PatchError(`path ${pointer} does not exist`);
    delete parent[key];
  }
  return doc;
}

export function jsonPatch(target: Json, patch: unknown): Json {
  if (!Array.isArray(patch)) throw new PatchError('a JSON patch must be an array of operations');
  let doc: Json = structuredClone(target);
  for (const raw of patch as unknown[]) {
    if (!isJsonObject(raw) || typeof raw['op'] !== 'string' || typeof raw['path'] !== 'string') throw new PatchError(`invalid operation ${JSON.stringify(raw)}`);
    const op = raw as unknown as Operation;
    switch (op.op) {
      case 'add':
        doc = add(doc, op.path, structuredClone(op.value ?? null));
        break;
      case 'remove':
        doc = remove(doc, op.path);
        break;
      case 'replace':
        get(doc, op.path);
        doc = op.path === '' ? structuredClone(op.value ?? null) : add(remove(doc, op.path), op.path, structuredClone(op.value ?? null));
        break;
      case 'move': {
        const v = get(doc, op.from ?? '');
        doc = add(remove(doc, op.from ?? ''), op.path, v);
        break;
      }
      case 'copy':
        doc = add(doc, op.path, structuredClone(get(doc, op.from ?? '')));
        break;
      case 'test':
        if (!deepEqual(get(doc, op.path), op.value ?? null)) throw new PatchError(`test failed at ${op.path}`);
        break;
      default:
        throw new PatchError(`unknown JSON patch operation ${JSON.stringify(op.op)}`);
    }
  }
  return doc;
}
