import type { ServerResponse } from 'node:http';
import type { KubeObject, StoredChange } from './object-store.js';
import { apiVersionOf, resourceId, type ResourceInfo } from './resources.js';
import { matchesFields, matchesLabels, type FieldRequirement, type LabelRequirement } from './selectors.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  readonly type: WatchEventType;
  readonly object: KubeObject;
}

/** What one list or watch request selects. */
export interface Selection {
  readonly resource: ResourceInfo;
  readonly namespace?: string;
  readonly labels: readonly LabelRequirement[];
  readonly fields: readonly FieldRequirement[];
}

export function selects(sel: Selection, obj: KubeObject): boolean {
  if (sel.namespace !== undefined && obj.metadata?.namespace !== sel.namespace) return false;
  return matchesLabels(sel.labels, obj.metadata?.labels) && matchesFields(sel.fields, obj);
}

/**
 * How a watcher with a selector sees a change, as the API server's watch cache reports it: an
 * update that makes an object start matching is ADDED, one that makes it stop matching is DELETED
 * (with the previous content and the new resourceVersion).
 */
export function eventFor(sel: Selection, change: StoredChange): WatchEvent | undefined {
  if (resourceId(change.resource) !== resourceId(sel.resource)) return undefined;
  const now = selects(sel, change.object);
  if (change.type !== 'MODIFIED') return now ? { type: change.type, object: change.object } : undefined;
  const before = change.previous !== undefined && selects(sel, change.previous);
  if (now && before) return { type: 'MODIFIED', object: change.object };
  if (now) return { type: 'ADDED', object: change.object };
  if (before) {
    const prev = change.previous as KubeObject;
    return { type: 'DELETED', object: { ...prev, metadata: { ...prev.metadata, resourceVersion: String(change.rv) } } };
  }
  return undefined;
}

/** The 410 the API server sends when a watch asks for history it no longer has. */
export function goneStatus(requestedRv: string, oldestRv: number): KubeObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${requestedRv} (${oldestRv})`,
    reason: 'Expired',
    code: 410,
  };
}

/** One open watch response: newline-delimited JSON events on a chunked HTTP body. */
export class WatchStream {
  private closed = false;
  private stalled = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    readonly selection: Selection,
    private readonly res: ServerResponse,
    readonly allowBookmarks: boolean,
    private readonly onClose: (stream: WatchStream) => void,
  ) {
    res.on('close', () => this.finish());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends headers at once: a client's watch() resolves only when it has them. */
  open(timeoutSeconds: number | undefined): void {
    this.res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache' });
    this.res.flushHeaders();
    if (timeoutSeconds !== undefined && timeoutSeconds > 0) {
      // The server ends a watch cleanly after timeoutSeconds; clients re-watch from their last RV.
      this.timer = setTimeout(() => this.end(), timeoutSeconds * 1000);
      this.timer.unref();
    }
  }

  attach(unsubscribe: () => void): void {
    this.unsubscribe = unsubscribe;
  }

  /**
   * From now on nothing is written and the server-side timeout is off, while the connection stays
   * open: what a client sees through a dead network path that nobody reset.
   */
  stall(): void {
    this.stalled = true;
    if (this.timer) clearTimeout(this.timer);
  }

  send(event: WatchEvent): void {
    if (this.closed || this.stalled) return;
    this.res.write(JSON.stringify(event) + '\n');
  }

  change(change: StoredChange): void {
    const ev = eventFor(this.selection, change);
    if (ev) this.send(ev);
  }

  bookmark(rv: number): void {
    if (!this.allowBookmarks) return;
    const r = this.selection.resource;
    this.send({ type: 'BOOKMARK', object: { kind: r.kind, apiVersion: apiVersionOf(r), metadata: { resourceVersion: String(rv) } } });
  }

  /** Ends the response cleanly (the terminating chunk is sent). */
  end(): void {
    if (this.closed) return;
    this.res.end();
    this.finish();
  }

  /** Breaks the connection without a terminating chunk, as a crashed server or a cut network does. */
  destroy(): void {
    if (this.closed) return;
    this.res.socket?.destroy();
    this.res.destroy();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.unsubscribe?.();
    this.onClose(this);
  }
}
