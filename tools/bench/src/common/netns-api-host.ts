/**
 * The test API server (@kube-proxy/testing-apiserver, the built copy) inside a simulated node's namespace,
 * for benchmarks that run a real proxy there: its test-apiserver-host.mjs under
 * `ip netns exec`, driven over its newline-delimited JSON stdin/stdout. Every request is bounded; the
 * host exits when its stdin closes, after its lifetime, or on stop().
 */
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ChildProcess } from 'node:child_process';
import type { SimulatedNode } from '@kube-proxy/testing-netns';
import { BUILT_TEST_APISERVER, testApiServerHostScript } from '@kube-proxy/testing-apiserver';

interface Ack {
  readonly id?: number;
  readonly ok: boolean;
  readonly error?: string;
  readonly url?: string;
}

export class NetnsApiHost {
  private nextId = 1;
  private readonly pending = new Map<number, (a: Ack) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(node: SimulatedNode, lifetimeS: number): Promise<NetnsApiHost> {
    if (!existsSync(BUILT_TEST_APISERVER)) throw new Error(`${BUILT_TEST_APISERVER} does not exist: run \`npx nx build testing-apiserver\` first`);
    const child = node.spawn(node.ns.node, process.execPath, [testApiServerHostScript(), String(lifetimeS)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-5000)));
    const lines = createInterface({ input: child.stdout! });
    // Set once the URL is known; acks are forwarded to it from then on.
    const ref: { host?: NetnsApiHost } = {};
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the API server host printed no URL in 15 s: ${stderr}`)), 15_000);
      child.once('exit', (code) => reject(new Error(`the API server host exited (${code}): ${stderr}`)));
      lines.on('line', (line) => {
        let msg: Ack;
        try {
          msg = JSON.parse(line) as Ack;
        } catch {
          return;
        }
        if (ref.host) {
          if (typeof msg.id === 'number') ref.host.pending.get(msg.id)?.(msg);
        } else if (typeof msg.url === 'string') {
          clearTimeout(timer);
          resolve(msg.url);
        }
      });
    });
    ref.host = new NetnsApiHost(child, url);
    return ref.host;
  }

  /** Creates the objects, `batchSize` per round trip, in order. */
  async createAll(objects: readonly object[], batchSize = 500): Promise<void> {
    for (let i = 0; i < objects.length; i += batchSize) {
      const ops = objects.slice(i, i + batchSize).map((object) => ({ op: 'create', object }));
      await this.request({ op: 'batch', ops }, 60_000);
    }
  }

  /** Replaces the objects (same name, new content), `batchSize` per round trip, in order. */
  async updateAll(objects: readonly object[], batchSize = 500): Promise<void> {
    for (let i = 0; i < objects.length; i += batchSize) {
      const ops = objects.slice(i, i + batchSize).map((object) => ({ op: 'update', object }));
      await this.request({ op: 'batch', ops }, 60_000);
    }
  }

  /** Replaces the objects (same names), in order, in one round trip. */
  async update(objects: readonly object[]): Promise<void> {
    await this.updateAll(objects, objects.length);
  }

  private request(cmd: Record<string, unknown>, timeoutMs: number): Promise<Ack> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`API server host: no answer to ${String(cmd['op'])} in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (a) => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (a.ok) resolve(a);
        else reject(new Error(`API server host: ${String(cmd['op'])} failed: ${a.error}`));
      });
      this.child.stdin!.write(`${JSON.stringify({ ...cmd, id })}\n`);
    });
  }

  stop(): void {
    this.child.stdin?.end();
    this.child.kill('SIGTERM');
  }
}
