import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '@kube-proxy/core';
import type { ClassifiedObject } from './object-key.js';
import type { ManifestObject } from './parse-manifests.js';
import { READ_KINDS, skipReason, type SkipContext, type SkipReason } from './skip-reasons.js';

interface Reported {
  readonly object: ManifestObject;
  readonly reason: SkipReason;
}

/**
 * Says, at the default verbosity, which manifest objects make no rules and why: people who bring
 * their own YAML have no API server to allocate cluster IPs, and would otherwise see nothing (the
 * Provider's own skip stays at debug, as upstream's V(3), for the API source). Each object is reported
 * once per version: a file re-read with the object unchanged (a touch, an edit elsewhere in it) says
 * nothing again.
 */
export class SkippedObjects {
  /** file → object id → what was last reported for it. */
  private reported = new Map<string, Map<string, Reported>>();
  private newIgnored = false;

  constructor(
    private readonly logger: Logger,
    private readonly ctx: SkipContext,
  ) {}

  /** Forgets what was reported (a source that follows no changes keeps no objects). */
  forget(): void {
    this.reported = new Map();
  }

  /** A file's freshly parsed objects, each with its classification. */
  fileRead(file: string, objects: readonly { object: ManifestObject; classified: ClassifiedObject; index: number }[]): void {
    const before = this.reported.get(file) ?? new Map<string, Reported>();
    const after = new Map<string, Reported>();
    for (const { object, classified, index } of objects) {
      const reason = skipReason(object, classified, this.ctx);
      if (!reason) continue;
      const id = objectId(object, classified, index);
      const previous = before.get(id);
      after.set(id, { object, reason });
      if (previous && isDeepStrictEqual(previous.object, object)) continue;
      this.logger[reason.level](reason.partial ? 'Serving manifest object in part' : 'Skipping manifest object', {
        object: id,
        file,
        reason: reason.reason,
        ...(reason.fix ? { fix: reason.fix } : {}),
      });
      if (reason.ignoredKind) this.newIgnored = true;
    }
    this.reported.set(file, after);
  }

  /** Ends one load: forgets files that are gone, and counts ignored kinds if this load found new ones. */
  loaded(files: Iterable<string>): void {
    const keep = new Set(files);
    for (const file of this.reported.keys()) if (!keep.has(file)) this.reported.delete(file);
    if (!this.newIgnored) return;
    this.newIgnored = false;
    const counts = new Map<string, number>();
    for (const objects of this.reported.values()) {
      for (const { reason } of objects.values()) {
        if (reason.ignoredKind) counts.set(reason.ignoredKind, (counts.get(reason.ignoredKind) ?? 0) + 1);
      }
    }
    const kinds = [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.logger.info('Ignored manifest objects of kinds the proxy does not read', {
      total: kinds.reduce((n, [, c]) => n + c, 0),
      kinds: kinds.map(([k, c]) => `${k}=${c}`).join(', '),
      reads: READ_KINDS,
    });
  }
}

/** `Kind namespace/name` (`Kind name` when no namespace applies, `Kind #N` for a nameless document). */
function objectId(object: ManifestObject, c: ClassifiedObject, index: number): string {
  const md = (c.ok ? c.object : object).metadata;
  const kind = String(object.kind);
  const name = typeof md?.name === 'string' && md.name !== '' ? md.name : `#${index}`;
  const ns = typeof md?.namespace === 'string' && md.namespace !== '' ? `${md.namespace}/` : '';
  return `${kind} ${ns}${name}`;
}
