/**
 * Reads a running proxy's log (-v=2) for its "SyncProxyRules complete" lines of one IP family: each
 * gives the sync's wall time and the process's CPU over it (core's SyncingProxier logs both). Output
 * arrives in arbitrary chunks; lines are reassembled, and only the last 64 kB of log are kept for
 * error messages, so a long run does not grow the bench's memory.
 */
import { sleep } from '@kube-proxy/testing-netns';

export interface SyncLine {
  /** When the line was read (Date.now()). */
  readonly at: number;
  readonly elapsedMs: number;
  readonly cpuMs: number;
}

const TAIL = 64 * 1024;

/** The figures of one log line, or undefined when it is not a sync line of `family`. */
export function parseSyncLine(line: string, family: 'IPv4' | 'IPv6', at: number): SyncLine | undefined {
  if (!line.includes('SyncProxyRules complete') || !line.includes(`ipFamily="${family}"`)) return undefined;
  const elapsed = /elapsedMs[=:]"?(\d+(?:\.\d+)?)/.exec(line);
  const cpu = /cpuMs[=:]"?(\d+(?:\.\d+)?)/.exec(line);
  if (!elapsed || !cpu) return undefined;
  return { at, elapsedMs: Number(elapsed[1]), cpuMs: Number(cpu[1]) };
}

export class SyncLineWatcher {
  private readonly lines: SyncLine[] = [];
  private partial = '';
  private log = '';

  constructor(
    private readonly family: 'IPv4' | 'IPv6',
    /** Why waiting is pointless (the proxy exited), or undefined. */
    private readonly gone: () => string | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  feed(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.log = (this.log + text).slice(-TAIL);
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    const at = this.now();
    for (const line of parts) {
      const hit = parseSyncLine(line, this.family, at);
      if (hit) this.lines.push(hit);
    }
  }

  /** Sync lines seen so far. */
  count(): number {
    return this.lines.length;
  }

  all(): readonly SyncLine[] {
    return this.lines;
  }

  tail(): string {
    return this.log.slice(-3000);
  }

  /** Throws when the proxy is gone (with its last log lines). */
  check(): void {
    const why = this.gone();
    if (why !== undefined) throw new Error(`${why}:\n${this.tail()}`);
  }

  /** The first sync line, waiting up to `timeoutMs` for it. */
  firstWithin(timeoutMs: number): Promise<SyncLine> {
    return this.next(0, timeoutMs);
  }

  /** The first sync line after the first `seen` ones. */
  async next(seen: number, timeoutMs: number): Promise<SyncLine> {
    return poll(
      `${this.family} sync line ${seen + 1}`,
      async () => {
        if (this.lines.length > seen) return this.lines[seen];
        this.check();
        return undefined;
      },
      timeoutMs,
      20,
    ).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}; the proxy's log ends:\n${this.tail()}`);
    });
  }
}

/**
 * Polls `check` until it returns a value, for at most `timeoutMs`. Unlike the harness' waitFor, an
 * error ends the wait at once: a proxy that exited will not sync later.
 */
export async function poll<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, intervalMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}
