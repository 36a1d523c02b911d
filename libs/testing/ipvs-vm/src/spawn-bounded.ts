/**
 * The two things netns's `run` does not do and the VM harness needs: a working directory
 * (`apt-get download` writes into it, `cpio -o` reads paths relative to it) and binary stdout
 * straight into a file (the initramfs archive). Argument arrays only, never a shell; killed with
 * SIGKILL after `timeoutMs`.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

export interface BoundedOptions {
  readonly cwd?: string;
  readonly input?: string;
  /** stdout goes to this file (created or truncated) instead of being collected. */
  readonly stdoutFile?: string;
  readonly timeoutMs: number;
}

export interface BoundedResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly durationMs: number;
}

export function spawnBounded(command: string, args: readonly string[], opts: BoundedOptions): Promise<BoundedResult> {
  const started = Date.now();
  const outFd = opts.stdoutFile === undefined ? undefined : openSync(opts.stdoutFile, 'w');
  return new Promise<BoundedResult>((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: opts.cwd, stdio: ['pipe', outFd ?? 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    child.stdin?.on('error', () => undefined);
    const done = (): void => {
      clearTimeout(timer);
      if (outFd !== undefined) closeSync(outFd);
    };
    child.on('error', (e) => {
      done();
      reject(new Error(`cannot run ${command}: ${e.message}`));
    });
    child.on('close', (code) => {
      done();
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut, durationMs: Date.now() - started });
    });
    child.stdin?.end(opts.input ?? '');
  });
}

/** spawnBounded that throws on a non-zero exit or a timeout. */
export async function spawnChecked(command: string, args: readonly string[], opts: BoundedOptions): Promise<BoundedResult> {
  const r = await spawnBounded(command, args, opts);
  if (r.code !== 0) {
    throw new Error(`${[command, ...args].join(' ')} failed (${r.timedOut ? 'timed out' : `exit ${r.code}`}): ${r.stderr.trim().slice(0, 2000)}`);
  }
  return r;
}
