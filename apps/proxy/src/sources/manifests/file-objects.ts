import type { Logger } from '@kube-proxy/core';
import type { FileObjects, ManifestEntry } from './merged-objects.js';
import { classifyObject, isProxiedKind, type ProxiedKind } from './object-key.js';
import type { ManifestObject } from './parse-manifests.js';
import type { SkippedObjects } from './skipped-objects.js';

export interface FileObjectsContext {
  readonly logger: Logger;
  readonly skipped: SkippedObjects;
  readonly onMalformed?: (kind: ProxiedKind) => void;
}

/**
 * One freshly parsed file's objects keyed by identity: malformed ones are logged (and counted) and
 * left out, a duplicate within the file is logged and the later copy kept, and SkippedObjects hears
 * of every object so it can say which make no rules. Runs once per read of the file.
 */
export function fileObjects(file: string, parsed: readonly ManifestObject[], ctx: FileObjectsContext): FileObjects {
  const objects = new Map<string, ManifestEntry>();
  const classified = parsed.map((object, index) => ({ object, classified: classifyObject(object), index }));
  for (const { classified: c, index } of classified) {
    if (c.ok) {
      if (objects.has(c.key)) ctx.logger.warn('Duplicate object in manifest file; the later one wins', { file, object: c.key });
      objects.set(c.key, { kind: c.kind, object: c.object });
    } else if (!c.ignored) {
      ctx.logger.warn('Skipping malformed object in manifest file', { file, document: index, err: c.error });
      if (isProxiedKind(c.kind)) ctx.onMalformed?.(c.kind);
    }
  }
  ctx.skipped.fileRead(file, classified);
  return objects;
}
