import { spawn } from 'node:child_process';

/** The outcome of one external command. */
export interface CommandResult {
  readonly command: string;
  readonly args: readonly string[];
  /** Exit code; `null` when the process was killed by a signal (including our own timeout). */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
  readonly timedOut: boolean;
}

export interface RunOptions {
  /** Written to the child's stdin (which is then closed). */
  readonly input?: string;
  /** Extra environment variables, merged over `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Kill the command (SIGKILL) after this long. Default 30 s: nothing the harness runs may hang. */
  readonly timeoutMs?: number;
  /** Resolve (instead of reject) on a non-zero exit. */
  readonly allowFailure?: boolean;
}

export class CommandError extends Error {
  constructor(readonly result: CommandResult) {
    super(
      `${[result.command, ...result.args].join(' ')} failed ` +
        `(${result.timedOut ? 'timed out' : result.signal ? `signal ${result.signal}` : `exit ${result.code}`}): ` +
        `${result.stderr.trim() || result.stdout.trim()}`.slice(0, 4000),
    );
    this.name = 'CommandError';
  }
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Runs `command` with an argument array (never through a shell), bounded in time, and collects its output.
 * Rejects with {@link CommandError} on a non-zero exit unless `allowFailure` is set.
 */
export function run(command: string, args: readonly string[], opts: RunOptions = {}): Promise<CommandResult> {
  const started = Date.now();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise<CommandResult>((resolve, reject) => {
    const child = spawn(command, [...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: mergeEnv(opts.env),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    // A child that exits without reading stdin would otherwise raise an uncaught EPIPE.
    child.stdin.on('error', () => undefined);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${command}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const result: CommandResult = {
        command,
        args: [...args],
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        durationMs: Date.now() - started,
        timedOut,
      };
      if (code === 0 || opts.allowFailure) resolve(result);
      else reject(new CommandError(result));
    });
    child.stdin.end(opts.input ?? '');
  });
}

export function mergeEnv(extra: Readonly<Record<string, string | undefined>> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Polls `check` until it returns a non-undefined value, bounded by `timeoutMs` and `maxTries`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  opts: { timeoutMs: number; intervalMs?: number; maxTries?: number },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  const interval = opts.intervalMs ?? 100;
  const maxTries = opts.maxTries ?? Math.ceil(opts.timeoutMs / interval) + 1;
  let lastError: unknown;
  for (let i = 0; i < maxTries; i++) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) break;
    await sleep(Math.min(interval, Math.max(0, deadline - Date.now())));
  }
  throw new Error(
    `timed out after ${opts.timeoutMs} ms waiting for ${what}` +
      (lastError ? `; last error: ${(lastError as Error).message ?? String(lastError)}` : ''),
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Like {@link sleep} but does not keep the process alive (for the losing side of a race). */
export function idle(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
