import { watch, type FSWatcher } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
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
import { classifyObject, isProxiedKind, type ManifestKind, type ProxiedKind } from './object-key.js';
import type { ManifestObject } from './parse-manifests.js';
import { listManifestFiles, readManifestFile } from './read-manifests.js';
import { SkippedObjects } from './skipped-objects.js';

export interface ManifestSourceOptions {
  /** A manifest file or a directory of them. */
  readonly path: string;
  /** Only the Node with this name is delivered (as upstream's field selector). */
  readonly nodeName: string;
  /** --service-proxy-name; "" for upstream's default selector. */
  readonly serviceProxyName: string;
  readonly logger: Logger;
  /** How often files are re-checked when no filesystem event arrives (ms). */
  readonly pollIntervalMs?: number;
  /**
   * Told of each Service/EndpointSlice/Node this source cannot even identify (no name, wrong
   * apiVersion, …), so such objects count as invalid like those validation refuses later.
   */
  readonly onMalformed?: (kind: ProxiedKind) => void;
}

export interface ManifestHandlers {
  readonly services: ServiceHandler;
  readonly endpointSlices: EndpointSliceHandler;
  readonly node: NodeHandler;
  /** The complete list of Service CIDRs on every change; sources that have it watch ServiceCIDRs. */
  readonly serviceCIDRs?: ServiceCIDRHandler;
}

interface FileState {
  readonly signature: string;
  readonly objects: ReadonlyMap<string, { kind: ManifestKind; object: ManifestObject }>;
}

/**
 * Serves Services, EndpointSlices, the Node and the ServiceCIDRs (as one list, see ServiceCIDRSet)
 * from manifest files instead of the API server: the embedded default that lets the proxy run
 * without a cluster. Behaves like an informer: an initial list, then add/update/delete as files change. A file that fails to parse keeps its previous
 * objects (a half-saved edit must not delete every service in it); a bad object is skipped and logged, and so is
 * every object that makes no rules for another reason (see SkippedObjects).
 */
export class ManifestSource {
  private files = new Map<string, FileState>();
  private delivered = new Map<string, { kind: ManifestKind; object: ManifestObject }>();
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
    this.skipped = new SkippedObjects(opts.logger, { nodeName: opts.nodeName, serviceProxyName: opts.serviceProxyName });
  }

  /** Reads everything once. Throws only if the path itself cannot be listed. */
  async loadInitial(): Promise<void> {
    await this.scan();
  }

  /** The proxy's own Node from the manifests, if present. */
  node(): V1Node | undefined {
    return this.current().get(`Node/${this.opts.nodeName}`)?.object as unknown as V1Node | undefined;
  }

  /** Objects currently known, for logging and tests. */
  counts(): Record<ManifestKind, number> {
    const c: Record<ManifestKind, number> = { Service: 0, EndpointSlice: 0, Node: 0, ServiceCIDR: 0 };
    for (const v of this.current().values()) c[v.kind]++;
    return c;
  }

  /** Delivers the initial state (adds, the Synced calls, the ServiceCIDR list) and starts following changes. */
  start(handlers: ManifestHandlers): void {
    this.handlers = handlers;
    if (handlers.serviceCIDRs) this.serviceCIDRs = new ServiceCIDRSet(handlers.serviceCIDRs, this.opts.logger);
    this.deliver();
    handlers.services.onServicesSynced();
    handlers.endpointSlices.onEndpointSlicesSynced();
    handlers.node.onNodeSynced();
    this.serviceCIDRs?.synced();
    this.startWatching();
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
  }

  /** Re-reads changed files and delivers the differences. Concurrent calls coalesce. */
  async rescan(): Promise<void> {
    if (this.rescanning) {
      this.rescanAgain = true;
      return this.rescanning;
    }
    this.rescanning = (async () => {
      do {
        this.rescanAgain = false;
        try {
          await this.scan();
          this.deliver();
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

  private startWatching(): void {
    const schedule = () => {
      if (this.stopped) return;
      if (this.debounceTimer) clearTimeout(this.debounceTimer);
      // Editors write files in several steps; wait for the burst to end.
      this.debounceTimer = setTimeout(() => void this.rescan(), 100);
    };
    try {
      this.watcher = watch(this.opts.path, { recursive: true }, schedule);
      this.watcher.on('error', (err) => this.opts.logger.warn('Manifest watch failed; polling only', { err: err.message }));
    } catch (err) {
      this.opts.logger.warn('Cannot watch manifests; polling only', { err: (err as Error).message });
    }
    // Polling catches what inotify misses (network filesystems, atomic symlink swaps).
    this.pollTimer = setInterval(() => void this.rescan(), this.opts.pollIntervalMs ?? 2000);
    this.pollTimer.unref();
  }

  private async scan(): Promise<void> {
    const { logger } = this.opts;
    const files = await listManifestFiles(this.opts.path);
    const next = new Map<string, FileState>();
    for (const file of files) {
      const previous = this.files.get(file);
      const result = await readManifestFile(file);
      if (previous && previous.signature === result.signature) {
        next.set(file, previous);
        continue;
      }
      if (!result.ok) {
        logger.error('Cannot read manifest file; keeping its previous objects', { file, err: result.error });
        // Keep the old signature so the file is retried on the next scan.
        next.set(file, previous ?? { signature: '', objects: new Map() });
        continue;
      }
      const objects = new Map<string, { kind: ManifestKind; object: ManifestObject }>();
      const classified = result.objects.map((object, index) => ({ object, classified: classifyObject(object), index }));
      classified.forEach(({ classified: c, index }) => {
        if (c.ok) {
          if (objects.has(c.key)) logger.warn('Duplicate object in manifest file; the later one wins', { file, object: c.key });
          objects.set(c.key, { kind: c.kind, object: c.object });
        } else if (!c.ignored) {
          logger.warn('Skipping malformed object in manifest file', { file, document: index, err: c.error });
          if (isProxiedKind(c.kind)) this.opts.onMalformed?.(c.kind);
        }
      });
      next.set(file, { signature: result.signature, objects });
      this.skipped.fileRead(file, classified);
    }
    this.files = next;
    this.skipped.loaded(next.keys());
  }

  /** The merged view of all files, filtered as the API informers would filter. */
  private current(): Map<string, { kind: ManifestKind; object: ManifestObject }> {
    const merged = new Map<string, { kind: ManifestKind; object: ManifestObject }>();
    for (const [file, state] of this.files) {
      for (const [key, value] of state.objects) {
        if (merged.has(key)) this.opts.logger.warn('Object defined in several manifest files; the later file wins', { file, object: key });
        merged.set(key, value);
      }
    }
    for (const [key, { kind, object }] of merged) {
      // Upstream watches every ServiceCIDR: the service-proxy-name selector is for Services and slices.
      const keep =
        kind === 'ServiceCIDR' ||
        (kind === 'Node'
          ? object.metadata?.name === this.opts.nodeName
          : isServedByThisProxy(object.metadata?.labels as Record<string, string> | undefined, this.opts.serviceProxyName));
      if (!keep) merged.delete(key);
    }
    return merged;
  }

  private deliver(): void {
    const h = this.handlers;
    if (!h || this.stopped) return;
    const next = this.current();
    for (const [key, prev] of this.delivered) {
      if (!next.has(key)) this.call(prev.kind, 'delete', prev.object, undefined, h);
    }
    for (const [key, cur] of next) {
      const prev = this.delivered.get(key);
      if (!prev) this.call(cur.kind, 'add', cur.object, undefined, h);
      else if (!isDeepStrictEqual(prev.object, cur.object)) this.call(cur.kind, 'update', prev.object, cur.object, h);
    }
    this.delivered = next;
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
