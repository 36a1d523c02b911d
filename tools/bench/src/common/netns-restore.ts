import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withNftCacheHint } from '@kube-proxy/netfilter-iptables';

export type Variant = 'legacy' | 'nft';

/** The longest one restore may take before it is killed and reported as over the limit. */
export const RESTORE_LIMIT_MS = 900_000;

function run(cmd: string, args: string[], input?: Buffer | string, env?: NodeJS.ProcessEnv, timeoutMs = RESTORE_LIMIT_MS): Promise<{ code: number | null; stderr: string; stdout: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.on('error', () => undefined); // EPIPE when the tool exits early; its exit code tells why
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout, timedOut });
    });
    child.stdin.end(input ?? '');
  });
}

/**
 * A throwaway network namespace in which a payload is loaded with the real iptables-restore, so the
 * kernel's cost is measured without touching the root namespace. Legacy runs get their own xtables
 * lock file so nothing else on the machine is blocked.
 */
export class RestoreNamespace {
  private readonly lockDir = mkdtempSync(join(tmpdir(), 'kp-bench-lock-'));
  private readonly env: NodeJS.ProcessEnv;

  private constructor(
    readonly name: string,
    readonly variant: Variant,
  ) {
    this.env = { ...process.env, XTABLES_LOCKFILE: join(this.lockDir, 'xtables.lock') };
  }

  static async create(name: string, variant: Variant): Promise<RestoreNamespace> {
    await run('ip', ['netns', 'del', name]); // leftover of an interrupted run, by exact name
    const r = await run('ip', ['netns', 'add', name]);
    if (r.code !== 0) throw new Error(`ip netns add ${name}: ${r.stderr.trim()}`);
    return new RestoreNamespace(name, variant);
  }

  /**
   * Loads a payload the way the proxier does (a full sync's `wholeTables` payload on iptables-nft
   * opens each table with `-S`, as core's runner writes it); resolves with the wall time in ms, or
   * null past RESTORE_LIMIT_MS.
   */
  async restore(payload: Buffer, opts: { wholeTables?: boolean } = {}): Promise<number | null> {
    const input = this.variant === 'nft' && opts.wholeTables ? Buffer.concat(withNftCacheHint([payload])) : payload;
    const started = process.hrtime.bigint();
    const r = await run('ip', ['netns', 'exec', this.name, `iptables-${this.variant}-restore`, '-w', '5', '--noflush', '--counters'], input, this.env);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (r.timedOut) return null;
    if (r.code !== 0) throw new Error(`iptables-${this.variant}-restore failed in ${this.name}: ${r.stderr.trim().slice(0, 500)}`);
    return ms;
  }

  async save(table: string): Promise<string> {
    const r = await run('ip', ['netns', 'exec', this.name, `iptables-${this.variant}-save`, '-t', table], undefined, this.env);
    return r.stdout;
  }

  async destroy(): Promise<void> {
    await run('ip', ['netns', 'del', this.name]);
    rmSync(this.lockDir, { recursive: true, force: true });
  }
}
