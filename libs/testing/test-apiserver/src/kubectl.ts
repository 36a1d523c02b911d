/**
 * Runs the real `kubectl` against a test API server as an operator would, without touching the
 * user's ~/.kube: a temporary kubeconfig (passed with --kubeconfig), and HOME and KUBECACHEDIR
 * pointing into the same temporary directory, so discovery and OpenAPI caches are private to one
 * client and removed by dispose(). Arguments go as an array (no shell); every call is bounded.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const KUBECTL_BIN = process.env['KUBECTL'] || '/usr/bin/kubectl';

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface KubectlOptions {
  /** The API server URL, e.g. http://127.0.0.1:PORT. */
  readonly server: string;
  /** Where kubectl runs: turns (file, args) into the command to spawn, e.g. under `ip netns exec NS`. */
  readonly wrap?: (file: string, args: readonly string[]) => { file: string; args: string[] };
  /** Per call; default 30 s. */
  readonly timeoutMs?: number;
  readonly namespace?: string;
}

export class Kubectl {
  readonly dir: string;
  readonly kubeconfig: string;

  constructor(private readonly opts: KubectlOptions) {
    this.dir = mkdtempSync(join(tmpdir(), 'kp-kubectl-'));
    this.kubeconfig = join(this.dir, 'kubeconfig');
    mkdirSync(join(this.dir, 'home'));
    // kubectl reads JSON as YAML. (client-go sends no bearer token over plain http, so the token is unused.)
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: opts.server } }],
      users: [{ name: 'operator', user: { token: 'test-operator-token' } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'operator', namespace: opts.namespace ?? 'default' } }],
      'current-context': 'test',
    };
    writeFileSync(this.kubeconfig, JSON.stringify(config, null, 2), { mode: 0o600 });
  }

  static available(): boolean {
    return existsSync(KUBECTL_BIN);
  }

  /** Writes `text` to a file in the client's directory (for `apply -f`), returning its path. */
  file(name: string, text: string): string {
    const p = join(this.dir, name);
    writeFileSync(p, text);
    return p;
  }

  /** Runs `kubectl --kubeconfig=<tmp> ...args`; resolves with the exit code (never rejects on a non-zero one). */
  run(args: readonly string[]): Promise<KubectlResult> {
    const full = [`--kubeconfig=${this.kubeconfig}`, ...args];
    const { file, args: argv } = this.opts.wrap ? this.opts.wrap(KUBECTL_BIN, full) : { file: KUBECTL_BIN, args: full };
    const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(this.dir, 'home'), KUBECACHEDIR: join(this.dir, 'cache'), KUBECONFIG: this.kubeconfig };
    return new Promise((resolve) => {
      execFile(file, argv, { env, timeout: this.opts.timeoutMs ?? 30_000, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        const e = err as (NodeJS.ErrnoException & { code?: number | string; killed?: boolean }) | null;
        const code = e === null ? 0 : typeof e.code === 'number' ? e.code : -1;
        const note = e?.killed ? `\n(kubectl killed after ${this.opts.timeoutMs ?? 30_000} ms)` : e && typeof e.code === 'string' ? `\n(${e.message})` : '';
        resolve({ code, stdout: String(stdout), stderr: String(stderr) + note });
      });
    });
  }

  /** As run(), but a non-zero exit throws with kubectl's output. */
  async ok(args: readonly string[]): Promise<string> {
    const r = await this.run(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
