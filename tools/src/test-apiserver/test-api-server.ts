import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Faults } from './faults.js';
import { ObjectStore, StoreError, type KubeObject } from './object-store.js';
import { apiVersionOf, parseResourcePath, resourceForKind, type ParsedPath, type ResourceInfo } from './resources.js';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import { eventFor, goneStatus, selects, WatchStream, type Selection, type WatchEvent } from './watch-stream.js';

export interface TestApiServerOptions {
  /** Changes kept for watch replay; older watch RVs get 410 Gone. Default 10 000. */
  readonly maxHistory?: number;
  /** Send BOOKMARK events this often to watches that allow them. Default: only on sendBookmarks(). */
  readonly bookmarkIntervalMs?: number;
  /**
   * How a watch from a compacted RV is refused: 'event' (HTTP 200, then an ERROR event with a 410
   * Status, as the real API server does) or 'http' (HTTP 410). Default 'event'.
   */
  readonly watchGone?: 'event' | 'http';
}

/** One request as the server saw it, for assertions. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly authorization?: string;
  readonly accept?: string;
  readonly at: number;
}

/** Identifies an object for delete/get without its full body. */
export interface ObjectRef {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

function statusBody(code: number, reason: string, message: string): KubeObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'AlreadyExists',
  410: 'Expired',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/**
 * A real HTTP server (127.0.0.1, ephemeral port) that speaks enough of the Kubernetes API for
 * informers: list and watch of Services, EndpointSlices and Nodes (cluster-wide and namespaced
 * paths, label/field selectors, resourceVersion semantics, BOOKMARKs, 410 Gone after compaction),
 * single-object GET, and Event POSTs (recorded). Tests drive it programmatically and inject faults.
 */
export class TestApiServer {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  private readonly store: ObjectStore;
  private readonly faults = new Faults();
  private readonly watches = new Set<WatchStream>();
  private readonly sockets = new Set<Socket>();
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private server: Server | undefined;
  private baseUrl = '';

  private constructor(private readonly opts: TestApiServerOptions) {
    this.store = new ObjectStore(opts.maxHistory ?? 10_000);
  }

  /** Starts a server on 127.0.0.1 with an OS-assigned port. */
  static async start(opts: TestApiServerOptions = {}): Promise<TestApiServer> {
    const s = new TestApiServer(opts);
    await s.listen();
    return s;
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    return this.baseUrl;
  }

  // ---- objects -------------------------------------------------------------------------------

  /** Creates an object (kind/apiVersion pick the resource); returns it as stored (uid, resourceVersion set). */
  create<T extends KubeObject>(obj: T): T {
    return this.store.create(this.resourceOf(obj), obj) as T;
  }

  /** Replaces an existing object; bumps its resourceVersion. */
  update<T extends KubeObject>(obj: T): T {
    return this.store.update(this.resourceOf(obj), obj) as T;
  }

  /** Creates or replaces. */
  upsert<T extends KubeObject>(obj: T): T {
    const r = this.resourceOf(obj);
    return (this.store.get(r, obj.metadata?.namespace || 'default', obj.metadata?.name ?? '') ? this.store.update(r, obj) : this.store.create(r, obj)) as T;
  }

  /** Deletes an object; returns its last state (with the deletion's resourceVersion). */
  delete(obj: ObjectRef | KubeObject): KubeObject {
    const r = this.resourceOf(obj as KubeObject);
    return this.store.delete(r, obj.metadata?.namespace, obj.metadata?.name ?? '');
  }

  get(ref: ObjectRef): KubeObject | undefined {
    return this.store.get(this.resourceOf(ref as KubeObject), ref.metadata.namespace || 'default', ref.metadata.name);
  }

  list(kind: string, apiVersion?: string): KubeObject[] {
    const r = resourceForKind(apiVersion, kind);
    if (!r) throw new Error(`test API server: unknown kind ${kind}`);
    return this.store.list(r);
  }

  /** Events posted by clients (events.k8s.io/v1 and core/v1), oldest first. */
  events(): KubeObject[] {
    const all = [...this.list('Event', 'events.k8s.io/v1'), ...this.list('Event', 'v1')];
    return all.sort((a, b) => Number(a.metadata?.resourceVersion) - Number(b.metadata?.resourceVersion));
  }

  /** The current global resourceVersion. */
  resourceVersion(): string {
    return String(this.store.currentRv());
  }

  /** Drops the change history: watches from any earlier RV now get 410 Gone and must relist. */
  compact(): void {
    this.store.compact();
  }

  /** Sends a BOOKMARK with the current RV on every watch that asked for bookmarks. */
  sendBookmarks(): void {
    const rv = this.store.currentRv();
    for (const w of this.watches) w.bookmark(rv);
  }

  // ---- faults --------------------------------------------------------------------------------

  /** Open watches: by default their connections are cut; `graceful` ends them cleanly instead. */
  dropAllWatches(opts: { graceful?: boolean } = {}): number {
    const n = this.watches.size;
    for (const w of [...this.watches]) {
      if (opts.graceful) w.end();
      else w.destroy();
    }
    return n;
  }

  /** Simulates an outage: every open connection is cut now, and new ones are closed at once for `ms`. */
  refuseConnections(ms: number): void {
    this.faults.refuseFor(ms);
    for (const w of [...this.watches]) w.destroy();
    for (const s of [...this.sockets]) s.destroy();
  }

  /**
   * Open watches go silent but stay connected, and new ones do the same after their headers (no
   * events, no server-side timeout) until `false` or clearFaults(): only a client-side watchdog
   * gets out of that.
   */
  stallWatches(on = true): void {
    this.faults.stallWatches(on);
    if (on) for (const w of this.watches) w.stall();
  }

  /** The next `n` requests get an HTTP error `status` with a Status body. */
  failRequests(n: number, status = 500): void {
    this.faults.failNext(n, status);
  }

  /** Every response is delayed by `ms` from now on (0 turns it off). */
  delayResponses(ms: number): void {
    this.faults.delay(ms);
  }

  /** Clears all injected faults. */
  clearFaults(): void {
    this.faults.reset();
  }

  activeWatches(): number {
    return this.watches.size;
  }

  /** Requests matching a filter, e.g. `r => r.query.watch === 'true'`. */
  requestsWhere(pred: (r: RecordedRequest) => boolean): RecordedRequest[] {
    return this.requests.filter(pred);
  }

  async close(): Promise<void> {
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    for (const w of [...this.watches]) w.destroy();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      for (const s of this.sockets) s.destroy();
    });
  }

  // ---- HTTP ----------------------------------------------------------------------------------

  private async listen(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (socket: Socket) => {
      if (this.faults.refusing()) {
        socket.destroy();
        return;
      }
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    // A client that disconnects mid-request must not crash the test process.
    server.on('clientError', (_err, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    const { port } = server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}`;
    if (this.opts.bookmarkIntervalMs) {
      this.bookmarkTimer = setInterval(() => this.sendBookmarks(), this.opts.bookmarkIntervalMs);
      this.bookmarkTimer.unref();
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://test-apiserver');
    this.requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      ...(req.headers.accept ? { accept: req.headers.accept } : {}),
      at: Date.now(),
    });
    if (this.faults.refusing()) {
      req.socket.destroy();
      return;
    }
    const delay = this.faults.responseDelay();
    if (delay > 0) {
      await sleep(delay);
      if (res.destroyed || req.socket.destroyed) return;
    }
    const injected = this.faults.takeFailure();
    if (injected !== undefined) return this.sendStatus(res, injected, 'injected failure');

    const target = parseResourcePath(url.pathname);
    if (!target) return this.sendStatus(res, 404, `the server could not find the requested resource (${url.pathname})`);
    try {
      switch (req.method) {
        case 'GET':
          if (target.name !== undefined) return this.getOne(res, target, target.name);
          if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') return this.watch(res, target, url.searchParams);
          return this.listAll(res, target, url.searchParams);
        case 'POST':
          return this.json(res, 201, this.store.create(target.resource, this.withPathNamespace(await readJson(req), target)));
        case 'PUT':
          return this.json(res, 200, this.store.update(target.resource, this.withPathNamespace(await readJson(req), target)));
        case 'DELETE':
          if (target.name === undefined) return this.sendStatus(res, 405, 'collection delete is not supported');
          return this.json(res, 200, this.store.delete(target.resource, target.namespace, target.name));
        default:
          return this.sendStatus(res, 405, `method ${req.method} is not supported`);
      }
    } catch (err) {
      if (err instanceof StoreError) return this.sendStatus(res, err.status, err.message);
      if (err instanceof SelectorError || err instanceof SyntaxError) return this.sendStatus(res, 400, err.message);
      return this.sendStatus(res, 500, (err as Error).message);
    }
  }

  private getOne(res: ServerResponse, target: ParsedPath, name: string): void {
    const obj = this.store.get(target.resource, target.namespace, name);
    if (!obj) return this.sendStatus(res, 404, `${target.resource.plural} "${name}" not found`);
    this.json(res, 200, obj);
  }

  private selection(target: ParsedPath, q: URLSearchParams): Selection {
    return {
      resource: target.resource,
      ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
      labels: parseLabelSelector(q.get('labelSelector') ?? ''),
      fields: parseFieldSelector(q.get('fieldSelector') ?? ''),
    };
  }

  private listAll(res: ServerResponse, target: ParsedPath, q: URLSearchParams): void {
    const sel = this.selection(target, q);
    const rv = q.get('resourceVersion') ?? '';
    // Simplified: an explicit RV older than the compaction point is Gone unless the client said any
    // newer state will do (the real server serves NotOlderThan lists from its cache).
    if (rv !== '' && rv !== '0' && q.get('resourceVersionMatch') !== 'NotOlderThan' && Number(rv) < this.store.compactedRv()) {
      return this.sendStatus(res, 410, `The resourceVersion for the provided list is too old.`);
    }
    const r = target.resource;
    // As the real server: list items carry no apiVersion/kind, the List does.
    const items = this.store
      .list(r, target.namespace)
      .filter((o) => selects(sel, o))
      .map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
    this.json(res, 200, { kind: `${r.kind}List`, apiVersion: apiVersionOf(r), metadata: { resourceVersion: this.resourceVersion() }, items });
  }

  private watch(res: ServerResponse, target: ParsedPath, q: URLSearchParams): void {
    const sel = this.selection(target, q);
    const rvParam = q.get('resourceVersion') ?? '';
    let replay: WatchEvent[];
    if (rvParam === '' || rvParam === '0') {
      // "Start at most recent": the current state as synthetic ADDED events, then changes.
      replay = this.store
        .list(sel.resource, sel.namespace)
        .filter((o) => selects(sel, o))
        .map((object) => ({ type: 'ADDED' as const, object }));
    } else {
      const from = Number(rvParam);
      if (!Number.isInteger(from) || from < 0) return this.sendStatus(res, 400, `invalid resourceVersion ${JSON.stringify(rvParam)}`);
      const changes = this.store.changesSince(from);
      if (!changes) {
        if (this.opts.watchGone === 'http') return this.sendStatus(res, 410, `too old resource version: ${rvParam} (${this.store.compactedRv()})`);
        const gone = new WatchStream(sel, res, false, () => undefined);
        gone.open(undefined);
        gone.send({ type: 'ERROR', object: goneStatus(rvParam, this.store.compactedRv()) });
        gone.end();
        return;
      }
      replay = changes.map((c) => eventFor(sel, c)).filter((e): e is WatchEvent => e !== undefined);
    }
    const timeout = q.has('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : undefined;
    const stream = new WatchStream(sel, res, q.get('allowWatchBookmarks') === 'true', (s) => this.watches.delete(s));
    stream.open(Number.isFinite(timeout) ? timeout : undefined);
    if (this.faults.watchesStalled()) stream.stall();
    for (const ev of replay) stream.send(ev);
    stream.attach(this.store.subscribe((c) => stream.change(c)));
    if (!stream.isClosed) this.watches.add(stream);
  }

  private withPathNamespace(body: unknown, target: ParsedPath): KubeObject {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SyntaxError('request body must be a JSON object');
    const obj = body as KubeObject;
    if (target.namespace === undefined) return obj;
    return { ...obj, metadata: { ...obj.metadata, namespace: target.namespace } };
  }

  private resourceOf(obj: KubeObject): ResourceInfo {
    const r = resourceForKind(obj.apiVersion, obj.kind);
    if (!r) throw new Error(`test API server: unsupported object ${obj.apiVersion ?? '?'}/${obj.kind ?? '?'}`);
    return r;
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    if (res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  private sendStatus(res: ServerResponse, code: number, message: string): void {
    this.json(res, code, statusBody(code, REASONS[code] ?? 'Unknown', message));
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : JSON.parse(text);
}
