import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Faults } from './faults.js';
import { ObjectStore, StoreError, type KubeObject } from './object-store.js';
import { apiVersionOf, parseResourcePath, resourceForKind, type ParsedPath, type ResourceInfo } from './resources.js';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import { eventFor, goneStatus, selects, WatchStream, type Selection, type WatchEvent } from './watch-stream.js';
import { discoveryDocument } from './discovery.js';
import { FieldValidationError } from './field-validation.js';
import { PatchError } from './json.js';
import { createObject, patchObject, replaceObject } from './object-writes.js';
import { openApiDocument } from './openapi.js';
import { UnsupportedPatchType } from './patch.js';

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
  readonly contentType?: string;
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
  405: 'MethodNotAllowed',
  409: 'AlreadyExists',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/**
 * A real HTTP server (127.0.0.1, ephemeral port) that speaks enough of the Kubernetes API for
 * informers and for kubectl: list and watch of Services, EndpointSlices, Nodes and ServiceCIDRs
 * (cluster-wide and namespaced paths, label/field selectors, resourceVersion semantics, BOOKMARKs,
 * 410 Gone after compaction), single-object GET, create/replace/patch/delete with watch events, discovery and
 * OpenAPI v3 documents (so `kubectl apply/patch/delete` work against it), and Event POSTs
 * (recorded). Tests drive it programmatically and inject faults (including a stop and restart on
 * the same port).
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
  private port = 0;
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

  /**
   * Only the watches open now go silent (headers sent, then nothing, connection kept, server-side
   * timeout off), as behind a network path that died without a reset; new watches work normally.
   * Returns how many were stalled.
   */
  stallOpenWatches(): number {
    for (const w of this.watches) w.stall();
    return this.watches.size;
  }

  /** The next `n` requests get an HTTP error `status` with a Status body. */
  failRequests(n: number, status = 500): void {
    this.faults.failNext(n, status);
  }

  /**
   * Every request for the resource `plural` (e.g. "servicecidrs") answers `status`: 404 as an older
   * server that does not serve it, 403 as RBAC without access to it. 0 (or clearFaults()) lifts it.
   */
  denyResource(plural: string, status: number): void {
    this.faults.denyResource(plural, status);
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

  /**
   * The server process "goes away": the listening socket is closed and every connection (watches
   * included) is cut, so clients get ECONNREFUSED until startListening(). Objects, history and the
   * resourceVersion counter stay, as an API server restarted in front of the same etcd.
   */
  async stopListening(): Promise<void> {
    for (const w of [...this.watches]) w.destroy();
    await this.closeServer();
  }

  /** Listens again on the same address and port as before stopListening(). */
  async startListening(): Promise<void> {
    if (this.server) return;
    await this.listen(this.port);
  }

  /** Whether the server is accepting connections (false between stopListening() and startListening()). */
  get listening(): boolean {
    return this.server !== undefined;
  }

  async close(): Promise<void> {
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    this.bookmarkTimer = undefined;
    for (const w of [...this.watches]) w.destroy();
    await this.closeServer();
  }

  private async closeServer(): Promise<void> {
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

  private async listen(port = 0): Promise<void> {
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
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    this.baseUrl = `http://127.0.0.1:${this.port}`;
    if (this.opts.bookmarkIntervalMs && !this.bookmarkTimer) {
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
      ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
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

    if (req.method === 'GET' && this.serveDiscovery(res, url.pathname, req.headers.accept)) return;
    const target = parseResourcePath(url.pathname);
    if (!target) return this.sendStatus(res, 404, `the server could not find the requested resource (${url.pathname})`);
    const denied = this.faults.denial(target.resource.plural);
    if (denied !== undefined) return this.sendStatus(res, denied, `${target.resource.plural} denied by the test (HTTP ${denied})`);
    try {
      const q = url.searchParams;
      switch (req.method) {
        case 'GET':
          if (target.name !== undefined) return this.getOne(res, target, target.name);
          if (q.get('watch') === 'true' || q.get('watch') === '1') return this.watch(res, target, q);
          return this.listAll(res, target, q);
        case 'POST':
          if (target.subresource) return this.sendStatus(res, 405, `POST is not supported on ${target.resource.plural}/${target.subresource}`);
          return this.json(res, 201, createObject(this.store, { target, body: await readJson(req), fieldValidation: q.get('fieldValidation') }));
        case 'PUT':
          if (target.name === undefined) return this.sendStatus(res, 405, 'PUT needs an object name in the path');
          return this.json(res, 200, replaceObject(this.store, { target, body: await readJson(req), fieldValidation: q.get('fieldValidation') }, target.name));
        case 'PATCH': {
          if (target.name === undefined) return this.sendStatus(res, 405, 'PATCH needs an object name in the path');
          const w = { target, body: await readBody(req), fieldValidation: q.get('fieldValidation') };
          const patched = patchObject(this.store, w, target.name, req.headers['content-type']);
          if (!patched) return this.sendStatus(res, 404, `${target.resource.plural} "${target.name}" not found`);
          return this.json(res, 200, patched);
        }
        case 'DELETE':
          if (target.name === undefined) return this.sendStatus(res, 405, 'collection delete is not supported');
          if (target.subresource) return this.sendStatus(res, 405, `DELETE is not supported on ${target.resource.plural}/${target.subresource}`);
          // The body, if any, is DeleteOptions (propagationPolicy, gracePeriodSeconds): nothing here waits
          // for finalizers or dependents, so every deletion is immediate and returns the object.
          await readBody(req);
          return this.json(res, 200, this.store.delete(target.resource, target.namespace, target.name));
        default:
          return this.sendStatus(res, 405, `method ${req.method} is not supported`);
      }
    } catch (err) {
      if (err instanceof StoreError) return this.sendStatus(res, err.status, err.message, err.reason);
      if (err instanceof UnsupportedPatchType) return this.sendStatus(res, 415, err.message);
      if (err instanceof PatchError) return this.sendStatus(res, 422, err.message);
      if (err instanceof FieldValidationError) return this.sendStatus(res, 400, err.message);
      if (err instanceof SelectorError || err instanceof SyntaxError) return this.sendStatus(res, 400, err.message);
      return this.sendStatus(res, 500, (err as Error).message);
    }
  }

  /** Discovery (`/version`, `/api`, `/apis`, group and group-version documents) and `/openapi/v3`. */
  private serveDiscovery(res: ServerResponse, pathname: string, accept: string | undefined): boolean {
    if (pathname === '/openapi/v3' || pathname.startsWith('/openapi/v3/')) {
      const doc = openApiDocument(pathname);
      if (doc === undefined) return false;
      this.json(res, 200, doc);
      return true;
    }
    const doc = discoveryDocument(pathname, accept);
    if (!doc) return false;
    this.json(res, 200, doc.body, doc.contentType);
    return true;
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

  private resourceOf(obj: KubeObject): ResourceInfo {
    const r = resourceForKind(obj.apiVersion, obj.kind);
    if (!r) throw new Error(`test API server: unsupported object ${obj.apiVersion ?? '?'}/${obj.kind ?? '?'}`);
    return r;
  }

  private json(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
    if (res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  private sendStatus(res: ServerResponse, code: number, message: string, reason?: string): void {
    this.json(res, code, statusBody(code, reason ?? REASONS[code] ?? 'Unknown', message));
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  return text === '' ? {} : JSON.parse(text);
}
