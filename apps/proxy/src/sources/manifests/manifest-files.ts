import { readFile } from 'node:fs/promises';
import type { Logger } from '@kube-proxy/core';
import { fileStamp } from './file-stamp.js';
import { parseManifestText, type ManifestObject } from './parse-manifests.js';
import { listManifestFiles } from './read-manifests.js';

/** One file whose objects changed: `before`/`after` undefined when it had/has none (new, removed). */
export interface FileChange<T> {
  readonly file: string;
  readonly before: T | undefined;
  readonly after: T | undefined;
}

export interface CheckResult<T> {
  /** Every manifest file now, in delivery order (later files win duplicate objects). */
  readonly files: readonly string[];
  readonly changes: readonly FileChange<T>[];
  /** Some file changed but is not read yet: it was still being written. Check again shortly. */
  readonly unsettled: boolean;
}

interface Tracked<T> {
  /** The stamp of the content `objects` came from, or of content that failed: retried once it changes. */
  readonly stamp: string;
  /** The file's digested objects; undefined before its first successful read. */
  readonly objects: T | undefined;
  /** A new stamp seen by one check: the file is read when the next check finds it unchanged. */
  readonly pending?: string;
}

interface FileOutcome<T> {
  /** Undefined when the file is gone. */
  readonly state?: Tracked<T>;
  readonly changed?: boolean;
  readonly unsettled?: boolean;
}

/**
 * Knows which manifest files changed without reading them: each check lists the files and stats
 * them (see fileStamp), and reads and parses only a file whose stamp differs from the one its objects
 * came from. An idle proxy thus costs a stat per file per check, whatever the files hold. A file
 * being written is read once complete: a changed stamp must be seen unchanged by two checks in a
 * row (the source spaces them by a settle delay), and a file that changes while read is read again
 * later, so a truncate-then-write never shows its half-written state. A file that cannot be read or
 * parsed keeps its previous objects (a half-saved edit must not delete every service in it).
 */
export class ManifestFiles<T> {
  private tracked = new Map<string, Tracked<T>>();

  constructor(
    private readonly path: string,
    /** Turns a file's parsed objects into what the caller keeps (called once per read). */
    private readonly digest: (file: string, objects: ManifestObject[]) => T,
    private readonly logger: Logger,
  ) {}

  /** Forgets every file's objects (a source that follows no changes keeps none). */
  forget(): void {
    this.tracked = new Map();
  }

  /** Reads every file now (startup). Throws only if the path itself cannot be listed. */
  load(): Promise<CheckResult<T>> {
    return this.check(false);
  }

  /** Stats every file and reads those changed and settled. Throws only if the path cannot be listed. */
  settledCheck(): Promise<CheckResult<T>> {
    return this.check(true);
  }

  private async check(settle: boolean): Promise<CheckResult<T>> {
    const files = await listManifestFiles(this.path);
    const next = new Map<string, Tracked<T>>();
    const changes: FileChange<T>[] = [];
    let unsettled = false;
    for (const file of files) {
      const prev = this.tracked.get(file);
      const outcome = await this.checkFile(file, prev, settle);
      if (outcome.state) next.set(file, outcome.state);
      if (outcome.changed) changes.push({ file, before: prev?.objects, after: outcome.state?.objects });
      unsettled ||= outcome.unsettled === true;
    }
    for (const [file, prev] of this.tracked) {
      if (!next.has(file) && prev.objects !== undefined) changes.push({ file, before: prev.objects, after: undefined });
    }
    this.tracked = next;
    return { files: [...next.keys()], changes, unsettled };
  }

  private async checkFile(file: string, prev: Tracked<T> | undefined, settle: boolean): Promise<FileOutcome<T>> {
    const stamp = await fileStamp(file);
    if (stamp === undefined) return {};
    if (prev && prev.stamp === stamp) return { state: prev.pending === undefined ? prev : { stamp, objects: prev.objects } };
    if (settle && prev?.pending !== stamp) return { state: { stamp: prev?.stamp ?? '', objects: prev?.objects, pending: stamp }, unsettled: true };
    return this.read(file, stamp, prev, settle);
  }

  private async read(file: string, stamp: string, prev: Tracked<T> | undefined, settle: boolean): Promise<FileOutcome<T>> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      return this.failed(file, stamp, prev, err);
    }
    const after = await fileStamp(file);
    if (after === undefined) return {};
    // Written again while read: what was read may be half of it. At startup it is served anyway
    // (there is nothing older to keep) under the old stamp, so the next check reads it again.
    if (after !== stamp && settle) return { state: { stamp: prev?.stamp ?? '', objects: prev?.objects, pending: after }, unsettled: true };
    let objects: ManifestObject[];
    try {
      objects = parseManifestText(text, file);
    } catch (err) {
      return this.failed(file, stamp, prev, err);
    }
    return { state: { stamp, objects: this.digest(file, objects) }, changed: true };
  }

  /** Keeps the previous objects; the stamp is recorded so the same content is not retried (and logged) at every check. */
  private failed(file: string, stamp: string, prev: Tracked<T> | undefined, err: unknown): FileOutcome<T> {
    this.logger.error('Cannot read manifest file; keeping its previous objects', { file, err: (err as Error).message });
    return { state: { stamp, objects: prev?.objects } };
  }
}
