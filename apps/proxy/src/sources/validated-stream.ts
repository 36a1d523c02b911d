import type { FieldError, InvalidObjectKind } from '@kube-proxy/core';

/** Upstream's handler contract for one resource, independent of the resource's method names. */
export interface StreamHandler<T> {
  add(obj: T): void;
  update(previous: T, current: T): void;
  delete(obj: T): void;
  synced(): void;
}

/** Told about every object a stream refuses: once per refused version of an object. */
export type SkipReport = (kind: InvalidObjectKind, ref: string, errors: readonly FieldError[], keptPrevious: boolean) => void;

/** `namespace/name` (or `name` for cluster-scoped objects), whatever the metadata holds. */
export function objectRef(obj: unknown): string {
  const md = (obj as { metadata?: { name?: unknown; namespace?: unknown } } | null | undefined)?.metadata;
  const name = typeof md?.name === 'string' ? md.name : '';
  const ns = typeof md?.namespace === 'string' ? md.namespace : '';
  return ns === '' ? name : `${ns}/${name}`;
}

/**
 * One kind's objects between a source and its handler, with validation at the edge. The handler only
 * ever sees objects that pass `validate`, and sees them with informer semantics intact:
 * - an invalid add is skipped;
 * - an invalid update keeps the version last delivered (no call);
 * - a valid update of an object never delivered (it was invalid so far) is delivered as an add;
 * - an update is delivered with the version last delivered as `previous` (not the source's, which may
 *   be a refused one);
 * - a delete of an object never delivered is dropped; otherwise the last delivered version is deleted.
 * Each refusal is reported once per object version: a source re-delivering the very same object (a
 * resync, or the CLI's early look at its Node) does not count it again.
 */
export class ValidatedStream<T> {
  private readonly delivered = new Map<string, T>();
  private readonly refused = new Map<string, T>();

  constructor(
    private readonly kind: InvalidObjectKind,
    private readonly validate: (obj: T) => readonly FieldError[],
    private readonly report: SkipReport,
  ) {}

  /** Whether `obj` may be delivered; reports it when it may not (and was not reported already). */
  admit(obj: T): boolean {
    const ref = objectRef(obj);
    const errors = this.validate(obj);
    if (errors.length === 0) {
      this.refused.delete(ref);
      return true;
    }
    if (this.refused.get(ref) !== obj) {
      this.refused.set(ref, obj);
      this.report(this.kind, ref, errors, this.delivered.has(ref));
    }
    return false;
  }

  /** `target` behind validation. */
  handler(target: StreamHandler<T>): StreamHandler<T> {
    return {
      add: (obj) => {
        if (!this.admit(obj)) return;
        this.delivered.set(objectRef(obj), obj);
        target.add(obj);
      },
      update: (_previous, current) => {
        if (!this.admit(current)) return;
        const ref = objectRef(current);
        const last = this.delivered.get(ref);
        this.delivered.set(ref, current);
        if (last === undefined) target.add(current);
        else target.update(last, current);
      },
      delete: (obj) => {
        const ref = objectRef(obj);
        this.refused.delete(ref);
        const last = this.delivered.get(ref);
        if (last === undefined) return;
        this.delivered.delete(ref);
        target.delete(last);
      },
      synced: () => target.synced(),
    };
  }
}
