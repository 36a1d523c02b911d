import { statSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type {
  EndpointSliceHandler,
  Logger,
  NodeHandler,
  ServiceCIDRHandler,
  ServiceHandler,
} from '@kube-proxy/core';
import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import { isServedByThisProxy } from '../object-filter.js';
import { ServiceCIDRSet } from '../service-cidrs/service-cidr-set.js';
import { fileObjects } from './file-objects.js';
import { ManifestFiles, type CheckResult } from './manifest-files.js';
import { MergedObjects, type FileObjects, type ManifestEntry } from './merged-objects.js';
import type { ManifestKind, ProxiedKind } from './object-key.js';
import type { ManifestObject } from './parse-manifests.js';
import { SkippedObjects } from './skipped-objects.js';

export interface ManifestSourceOptions {
  /** A manifest file or a directory of them. */
  readonly path: string;
  /** Only the Node with this name is delivered (as upstream's field selector). */
  readonly nodeName: string;
  /** --service-proxy-name; "" for upstream's default selector. */
  readonly serviceProxyName: string;
  readonly logger: Logger;
  /** How often files are stat'ed for changes when no filesystem event arrives (ms). */
  readonly pollIntervalMs?: number;
  /** How long a changed file's stat must stay the same before it is read (ms); 250 unless set. */
  readonly settleMs?: number;
  /** Waits between the checks that see whether a changed file has settled; tests interleave writes here. */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Told of each Service/EndpointSlice/Node this source cannot even identify (no name, wrong
   * apiVersion, …), so such objects count as invalid like those validation refuses later.
   */
  readonly onMalformed?: (kind: ProxiedKind) => void;
  /**
   * false: deliver the initial state and follow nothing (--once). The source then lets go of the
   * decoded objects as soon as the handlers have them: at 10k Services they are ~20 MB that nothing
   * would read again, held through the first sync (the dry run's peak). Default true.
   */
  readonly followChanges?: boolean;
}

export interface ManifestHandlers {
  readonly services: ServiceHandler;
  readonly endpointSlices: EndpointSliceHandler;
  readonly node: NodeHandler;
  /** The complete list of Service CIDRs on every change; sources that have it watch ServiceCIDRs. */
  readonly serviceCIDRs?: ServiceCIDRHandler;
}

/** Checks after a change until every changed file has settled, at most this many (then the periodic check goes on). */
const MAX_SETTLE_ROUNDS = 40;

/**
 * Serves Services, EndpointSlices, the Node and the ServiceCIDRs (as one list, see ServiceCIDRSet)
 * from manifest files instead of the API server: the embedded default that lets the proxy run
 * without a cluster. Behaves like an informer: an initial list, then add/update/delete as files change.
 * Changes are noticed by a filesystem watch plus a periodic check that only stats the files
 * (ManifestFiles): an idle proxy re-reads nothing, and a changed file is read once its writer is
 * done, then diffed against its own previous objects only (MergedObjects). A file that fails to parse
 * keeps its previous objects (a half-saved edit must not delete every service in it); a bad object is
 * skipped and logged, and so is every object that makes no rules for another reason (see SkippedObjects).
 */
export class ManifestSource {
  private readonly files: ManifestFiles<FileObjects>;
  private readonly merged: MergedObjects;
  private handlers: ManifestHandlers | undefined;
  private serviceCIDRs: ServiceCIDRSet | undefined;
  private watcher: FSWatcher | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private rescanning: Promise<void> | undefined;
  private rescanAgain = false;
  private stopped = false;
  private readonly skipped: SkippedObjects;

  constructor(private readonly opts: ManifestSourceOptions) {
    const { logger, nodeName, serviceProxyName } = opts;
    this.skipped = new SkippedObjects(logger, { nodeName, serviceProxyName });
    const ctx = { logger, skipped: this.skipped, ...(opts.onMalformed ? { onMalformed: opts.onMalformed } : {}) };
    this.files = new ManifestFiles(opts.path, (file, parsed) => fileObjects(file, parsed, ctx), logger);
    this.merged = new MergedObjects((entry) => this.served(entry), logger);
  }

  /** Reads everything once. Throws only if the path itself cannot be listed. */
  async loadInitial(): Promise<void> {
    this.apply(await this.files.load());
  }

  /** The proxy's own Node from the manifests, if present. */
  node(): V1Node | undefined {
    return this.merged.view.get(`Node/${this.opts.nodeName}`)?.object as unknown as V1Node | undefined;
  }

  /** Objects currently known, for logging and tests. */
  counts(): Record<ManifestKind, number> {
    const c: Record<ManifestKind, number> = { Service: 0, EndpointSlice: 0, Node: 0, ServiceCIDR: 0 };
    for (const v of this.merged.view.values()) c[v.kind]++;
    return c;
  }

  /** Delivers the initial state (adds, the Synced calls, the ServiceCIDR list) and starts following changes. */
  start(handlers: ManifestHandlers): void {
    this.handlers = handlers;
    if (handlers.serviceCIDRs) this.serviceCIDRs = new ServiceCIDRSet(handlers.serviceCIDRs, this.opts.logger);
    for (const cur of this.merged.view.values()) this.call(cur.kind, 'add', cur.object, undefined, handlers);
    this.serviceCIDRs?.flush();
    handlers.services.onServicesSynced();
    handlers.endpointSlices.onEndpointSlicesSynced();
    handlers.node.onNodeSynced();
    this.serviceCIDRs?.synced();
    if (this.opts.followChanges === false) this.release();
    else this.startWatching();
  }

  /** Drops every decoded object (counts() and node() then report none): nothing will be diffed against them. */
  private release(): void {
    this.files.forget();
    this.merged.forget();
    this.skipped.forget();
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
  }

  /** Re-reads changed files once they settle and delivers the differences. Concurrent calls coalesce. */
  async rescan(): Promise<void> {
    if (this.rescanning) {
      this.rescanAgain = true;
      return this.rescanning;
    }
    this.rescanning = (async () => {
      do {
        this.rescanAgain = false;
        try {
          await this.checkUntilSettled();
        } catch (err) {
          this.opts.logger.error('Failed to re-read manifests; keeping the previous state', {
            path: this.opts.path,
            err: (err as Error).message,
          });
        }
      } while (this.rescanAgain && !this.stopped);
    })().finally(() => {
      this.rescanning = undefined;
    });
    return this.rescanning;
  }

  private async checkUntilSettled(): Promise<void> {
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise<void>((res) => setTimeout(res, ms)));
    for (let round = 0; !this.stopped; round++) {
      const result = await this.files.settledCheck();
      this.apply(result);
      if (!result.unsettled || round + 1 >= MAX_SETTLE_ROUNDS) return;
      await sleep(this.settleMs());
    }
  }

  private settleMs(): number {
    return this.opts.settleMs ?? 250;
  }

  private startWatching(): void {
    const schedule = () => {
      if (this.stopped) return;
      if (this.debounceTimer) clearTimeout(this.debounceTimer);
      // Editors write files in several steps; wait for the burst to end.
      this.debounceTimer = setTimeout(() => void this.rescan(), Math.min(100, this.settleMs()));
    };
    try {
      // A single file is watched through its folder: a watch on the file itself follows its inode,
      // which an atomic replacement (write elsewhere, rename over it) leaves behind after one event.
      const single = statSync(this.opts.path).isFile();
      this.watcher = single ? watch(dirname(this.opts.path), schedule) : watch(this.opts.path, { recursive: true }, schedule);
      this.watcher.on('error', (err) => this.opts.logger.warn('Manifest watch failed; polling only', { err: err.message }));
    } catch (err) {
      this.opts.logger.warn('Cannot watch manifests; polling only', { err: (err as Error).message });
    }
    // The periodic check catches what inotify misses (network filesystems, atomic symlink swaps);
    // it stats the files and reads none that did not change.
    this.pollTimer = setInterval(() => void this.rescan(), this.opts.pollIntervalMs ?? 2000);
    this.pollTimer.unref();
  }

  /** Filters as the API informers would: upstream watches every ServiceCIDR; the service-proxy-name selector is for Services and slices. */
  private served({ kind, object }: ManifestEntry): boolean {
    if (kind === 'ServiceCIDR') return true;
    if (kind === 'Node') return object.metadata?.name === this.opts.nodeName;
    return isServedByThisProxy(object.metadata?.labels as Record<string, string> | undefined, this.opts.serviceProxyName);
  }

  /** Folds changed files into the merged view and delivers its differences (once started). */
  private apply(result: CheckResult<FileObjects>): void {
    if (result.changes.length === 0) return;
    const diffs = this.merged.apply(result.changes, result.files);
    this.skipped.loaded(result.files);
    const h = this.handlers;
    if (!h || this.stopped) return;
    for (const d of diffs) {
      if (d.op === 'add') this.call(d.cur.kind, 'add', d.cur.object, undefined, h);
      else if (d.op === 'update') this.call(d.cur.kind, 'update', d.prev.object, d.cur.object, h);
      else this.call(d.prev.kind, 'delete', d.prev.object, undefined, h);
    }
    // One list per reload, however many ServiceCIDR objects it changed.
    this.serviceCIDRs?.flush();
  }

  private call(kind: ManifestKind, op: 'add' | 'update' | 'delete', a: ManifestObject, b: ManifestObject | undefined, h: ManifestHandlers): void {
    // Handlers must never take the source down: a throw is a bug in a handler, logged and contained.
    // The objects are passed on as decoded; core validates every field it reads.
    const prev = a as unknown;
    const cur = b as unknown;
    try {
      if (kind === 'ServiceCIDR') {
        if (op === 'delete') this.serviceCIDRs?.remove(prev);
        else this.serviceCIDRs?.set(op === 'add' ? prev : cur);
      } else if (kind === 'Service') {
        const s = h.services;
        if (op === 'add') s.onServiceAdd(prev as V1Service);
        else if (op === 'update') s.onServiceUpdate(prev as V1Service, cur as V1Service);
        else s.onServiceDelete(prev as V1Service);
      } else if (kind === 'EndpointSlice') {
        const s = h.endpointSlices;
        if (op === 'add') s.onEndpointSliceAdd(prev as V1EndpointSlice);
        else if (op === 'update') s.onEndpointSliceUpdate(prev as V1EndpointSlice, cur as V1EndpointSlice);
        else s.onEndpointSliceDelete(prev as V1EndpointSlice);
      } else {
        const n = h.node;
        if (op === 'add') n.onNodeAdd(prev as V1Node);
        else if (op === 'update') n.onNodeUpdate(prev as V1Node, cur as V1Node);
        else n.onNodeDelete(prev as V1Node);
      }
    } catch (err) {
      this.opts.logger.error('Handler failed for manifest object', { kind, op, name: a.metadata?.name, err: (err as Error).message });
    }
  }
}
