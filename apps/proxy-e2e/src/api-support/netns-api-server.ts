/**
 * A TestApiServer running INSIDE a namespace of a simulated node (the proxy there cannot reach the root
 * namespace's loopback). It is @kube-proxy/testing-apiserver's test-apiserver-host.mjs under `ip netns exec`, driven by
 * newline-delimited JSON over its stdin/stdout. Every request is bounded; the host process exits when
 * its stdin closes (i.e. when this test process goes away), after its max lifetime, or on stop().
 */
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ChildProcess } from 'node:child_process';
import { idle, type SimulatedNode } from '@kube-proxy/testing-netns';
import { BUILT_TEST_APISERVER, testApiServerHostScript, type KubeObject, type RecordedRequest } from '@kube-proxy/testing-apiserver';

export const API_HOST_SCRIPT = testApiServerHostScript();

export interface Ack {
  readonly id?: number;
  readonly op?: string;
  readonly ok: boolean;
  readonly result?: Record<string, unknown>;
  readonly error?: string;
  readonly activeWatches?: number;
  readonly resourceVersion?: string;
}

const LOG_CAP = 200_000;

export class NetnsApiServer {
  private nextId = 1;
  private readonly pending = new Map<number, (a: Ack) => void>();
  private stderrText = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      child.once('exit', () => resolve());
    });
  }

  /** Starts the host in `ns` (default: the node namespace) and waits (bounded) for its URL. */
  static async start(node: SimulatedNode, opts: { ns?: string; lifetimeS?: number; timeoutMs?: number } = {}): Promise<NetnsApiServer> {
    if (!existsSync(BUILT_TEST_APISERVER)) throw new Error(`${BUILT_TEST_APISERVER} does not exist: run \`npx nx build testing-apiserver\` first`);
    const child = node.spawn(opts.ns ?? node.ns.node, process.execPath, [API_HOST_SCRIPT, String(opts.lifetimeS ?? 300)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => {
      if (stderr.length < LOG_CAP) stderr += d;
    });
    const rl = createInterface({ input: child.stdout! });
    // Set once the URL is known; the line handler below forwards acks to it from then on.
    const ref: { server?: NetnsApiServer } = {};
    const first = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the API server host printed no URL within ${opts.timeoutMs ?? 15_000} ms; stderr:\n${stderr}`)), opts.timeoutMs ?? 15_000);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the API server host exited (${code ?? signal}) before printing its URL; stderr:\n${stderr}`));
      });
      rl.on('line', (line) => {
        let msg: Record<string, unknown>;
        try {
          msg = JSON.parse(line) as Record<string, unknown>;
        } catch {
          return;
        }
        if (!ref.server) {
          if (typeof msg['url'] === 'string') {
            clearTimeout(timer);
            resolve(msg['url']);
          }
          return;
        }
        ref.server.onAck(msg as unknown as Ack);
      });
    });
    let url: string;
    try {
      url = await first;
    } catch (e) {
      child.stdin?.end();
      try {
        child.kill('SIGKILL');
      } catch {
        /* gone */
      }
      throw e;
    }
    const server = new NetnsApiServer(child, url);
    ref.server = server;
    server.stderrText = stderr;
    child.stderr?.on('data', (d: string) => {
      if (server.stderrText.length < LOG_CAP) server.stderrText += d;
    });
    child.once('exit', (code, signal) => {
      server.exit = { code, signal };
      for (const [, res] of server.pending) res({ ok: false, error: `host exited (${code ?? signal})` });
      server.pending.clear();
    });
    return server;
  }

  private onAck(a: Ack): void {
    if (typeof a.id !== 'number') return;
    const res = this.pending.get(a.id);
    if (!res) return;
    this.pending.delete(a.id);
    res(a);
  }

  /** Sends one command and waits (bounded) for its ack; a failed ack throws. */
  async request(cmd: Record<string, unknown>, timeoutMs = 5000): Promise<Ack> {
    if (this.exit) throw new Error(`the API server host has exited (${JSON.stringify(this.exit)}); stderr:\n${this.stderrText}`);
    const id = this.nextId++;
    const ack = new Promise<Ack>((resolve) => this.pending.set(id, resolve));
    this.child.stdin!.write(`${JSON.stringify({ ...cmd, id })}\n`);
    const r = await Promise.race([ack, idle(timeoutMs).then(() => undefined)]);
    if (!r) {
      this.pending.delete(id);
      throw new Error(`no ack for ${String(cmd['op'])} within ${timeoutMs} ms`);
    }
    if (!r.ok) throw new Error(`API server host: ${String(cmd['op'])} failed: ${r.error}`);
    return r;
  }

  create(object: KubeObject): Promise<Ack> {
    return this.request({ op: 'create', object });
  }
  update(object: KubeObject): Promise<Ack> {
    return this.request({ op: 'update', object });
  }
  delete(object: KubeObject): Promise<Ack> {
    return this.request({ op: 'delete', object });
  }
  /** Cuts every open watch (graceful: ends them cleanly); the ack's result.dropped counts them. */
  dropAllWatches(graceful = false): Promise<Ack> {
    return this.request({ op: 'dropAllWatches', graceful });
  }
  async activeWatches(): Promise<number> {
    return (await this.request({ op: 'activeWatches' })).activeWatches ?? 0;
  }
  /** The server goes away (listener closed, connections cut: clients get ECONNREFUSED); the store stays. */
  stopListening(): Promise<Ack> {
    return this.request({ op: 'stopListening' });
  }
  /** Back on the same address and port, with the same objects, history and resourceVersion. */
  startListening(): Promise<Ack> {
    return this.request({ op: 'startListening' });
  }
  /** Drops the change history: watches from older resourceVersions get 410 Gone. */
  compact(): Promise<Ack> {
    return this.request({ op: 'compact' });
  }
  /** Open watches (and, while on, new ones) go silent after their headers. */
  stallWatches(on = true): Promise<Ack> {
    return this.request({ op: 'stallWatches', on });
  }
  /** Only the watches open now go silent (a dead path to them); the ack's result.stalled counts them. */
  stallOpenWatches(): Promise<Ack> {
    return this.request({ op: 'stallOpenWatches' });
  }
  clearFaults(): Promise<Ack> {
    return this.request({ op: 'clearFaults' });
  }
  /** Runs the commands in order in the host, with nothing (no client request) handled in between. */
  batch(ops: ReadonlyArray<Record<string, unknown>>): Promise<Ack> {
    return this.request({ op: 'batch', ops });
  }
  /** Requests the server received at or after `since` (epoch ms, the host's clock = this machine's). */
  async requestsSince(since: number): Promise<RecordedRequest[]> {
    const r = (await this.request({ op: 'requests', since })).result?.['requests'];
    return Array.isArray(r) ? (r as RecordedRequest[]) : [];
  }

  /** Every Event (events.k8s.io/v1 and core v1) posted to the server so far, oldest first. */
  async events(): Promise<KubeObject[]> {
    const r = (await this.request({ op: 'events' })).result?.['events'];
    return Array.isArray(r) ? (r as KubeObject[]) : [];
  }

  /** One stored object (kind and name; namespace for namespaced kinds), or undefined. */
  async get(ref: { apiVersion?: string; kind: string; metadata: { name: string; namespace?: string } }): Promise<KubeObject | undefined> {
    const o = (await this.request({ op: 'get', object: ref })).result?.['object'];
    return o && typeof o === 'object' ? (o as KubeObject) : undefined;
  }

  /** The conditions of a stored Node (as clients PATCHed them on nodes/{name}/status), oldest type first. */
  async nodeConditions(name: string): Promise<Array<Record<string, string>>> {
    const n = (await this.get({ kind: 'Node', metadata: { name } })) as { status?: { conditions?: Array<Record<string, string>> } } | undefined;
    return n?.status?.conditions ?? [];
  }

  stderr(): string {
    return this.stderrText;
  }

  /** Closes its stdin (the host exits), then SIGKILLs it if it did not within `graceMs`. */
  async stop(graceMs = 4000): Promise<void> {
    if (this.exit) return;
    this.child.stdin?.end();
    const done = await Promise.race([this.exited.then(() => true), idle(graceMs).then(() => false)]);
    if (done) return;
    try {
      this.child.kill('SIGKILL');
    } catch {
      /* gone */
    }
    await Promise.race([this.exited, idle(2000)]);
  }
}
