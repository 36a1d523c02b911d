import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '@kube-proxy/core';
import type { ManifestKind } from './object-key.js';
import type { ManifestObject } from './parse-manifests.js';

export interface ManifestEntry {
  readonly kind: ManifestKind;
  readonly object: ManifestObject;
}

/** One file's objects by key (`kind/namespace/name`). */
export type FileObjects = ReadonlyMap<string, ManifestEntry>;

export type ObjectDiff =
  | { readonly op: 'add'; readonly cur: ManifestEntry }
  | { readonly op: 'update'; readonly prev: ManifestEntry; readonly cur: ManifestEntry }
  | { readonly op: 'delete'; readonly prev: ManifestEntry };

export interface FileObjectsChange {
  readonly file: string;
  readonly before: FileObjects | undefined;
  readonly after: FileObjects | undefined;
}

/**
 * The objects of all manifest files merged into one view, kept up to date file by file: a changed
 * file costs work for its own objects only, never for the whole cluster. When several files define
 * the same object the later file (in listing order) wins, and the earlier one's copy comes back if
 * the later one drops it. `keep` filters the view as the API informers would (selectors, node name).
 */
export class MergedObjects {
  /** What the handlers are told about: the winning copy of each object that `keep` accepts. */
  readonly view = new Map<string, ManifestEntry>();
  private readonly files = new Map<string, FileObjects>();
  /** key → the files defining it (almost always one). */
  private readonly owners = new Map<string, Set<string>>();
  private order = new Map<string, number>();

  constructor(
    private readonly keep: (entry: ManifestEntry) => boolean,
    private readonly logger: Logger,
  ) {}

  /** Applies changed files (`files`: every file, in order) and returns the view's differences, deletions first. */
  apply(changes: readonly FileObjectsChange[], files: readonly string[]): ObjectDiff[] {
    this.order = new Map(files.map((f, i) => [f, i]));
    const affected = new Set<string>();
    for (const { file, before, after } of changes) {
      for (const key of before?.keys() ?? []) this.owners.get(key)?.delete(file);
      if (after) this.files.set(file, after);
      else this.files.delete(file);
      for (const key of after?.keys() ?? []) this.own(key, file);
      for (const key of after?.keys() ?? []) affected.add(key);
      for (const key of before?.keys() ?? []) affected.add(key);
    }
    const deletions: ObjectDiff[] = [];
    const others: ObjectDiff[] = [];
    for (const key of affected) {
      const diff = this.refresh(key);
      if (diff?.op === 'delete') deletions.push(diff);
      else if (diff) others.push(diff);
    }
    return [...deletions, ...others];
  }

  /** Forgets every object and file (a source that follows no changes keeps none). */
  forget(): void {
    this.view.clear();
    this.files.clear();
    this.owners.clear();
  }

  private own(key: string, file: string): void {
    let owners = this.owners.get(key);
    if (!owners) this.owners.set(key, (owners = new Set()));
    owners.add(file);
    // Said when a file defining a duplicate is read, not at every look at the merged view.
    if (owners.size > 1) this.logger.warn('Object defined in several manifest files; the later file wins', { file, object: key, files: [...owners] });
  }

  /** Recomputes one key's winner and updates the view. */
  private refresh(key: string): ObjectDiff | undefined {
    const owners = this.owners.get(key);
    let winner: ManifestEntry | undefined;
    let best = -1;
    for (const file of owners ?? []) {
      const at = this.order.get(file) ?? -1;
      if (at > best) [best, winner] = [at, this.files.get(file)?.get(key)];
    }
    if (owners?.size === 0) this.owners.delete(key);
    const cur = winner && this.keep(winner) ? winner : undefined;
    const prev = this.view.get(key);
    if (cur) this.view.set(key, cur);
    else this.view.delete(key);
    if (!prev) return cur ? { op: 'add', cur } : undefined;
    if (!cur) return { op: 'delete', prev };
    return prev.object === cur.object || isDeepStrictEqual(prev.object, cur.object) ? undefined : { op: 'update', prev, cur };
  }
}
