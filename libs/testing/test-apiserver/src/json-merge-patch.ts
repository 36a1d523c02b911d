/**
 * JSON merge patch (RFC 7386, `application/merge-patch+json`, `kubectl patch --type=merge`): objects
 * merge recursively, `null` removes a field, anything else (arrays included) replaces.
 */

import { isJsonObject, type Json } from './json.js';

export function jsonMergePatch(target: Json | undefined, patch: Json): Json {
  if (!isJsonObject(patch)) return structuredClone(patch);
  const out: { [key: string]: Json } = isJsonObject(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v);
  }
  return out;
}
