/**
 * PATCH bodies by Content-Type, as the API server dispatches them: JSON patch, JSON merge patch and
 * strategic merge patch. Server-side apply (`application/apply-patch+yaml`, `kubectl apply
 * --server-side`) is not implemented and is refused with 415, which kubectl reports as such.
 */
import { jsonMergePatch } from './json-merge-patch.js';
import { jsonPatch } from './json-patch.js';
import { PatchError, type Json } from './json.js';
import { strategicMergePatch } from './strategic-merge-patch.js';

export const PATCH_CONTENT_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'] as const;

export class UnsupportedPatchType extends Error {
  override readonly name = 'UnsupportedPatchType';
}

/** The object after `patch`; throws PatchError (422) or UnsupportedPatchType (415). */
export function applyPatch(contentType: string | undefined, current: Json, patch: Json, kind: string | undefined): Json {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  switch (type) {
    case 'application/json-patch+json':
      return jsonPatch(current, patch);
    case 'application/merge-patch+json':
      return jsonMergePatch(current, patch);
    case 'application/strategic-merge-patch+json':
      return strategicMergePatch(current, patch, kind);
    default:
      throw new UnsupportedPatchType(`the body of the request was in an unknown format - accepted media types include: ${PATCH_CONTENT_TYPES.join(', ')}`);
  }
}

export { PatchError };
