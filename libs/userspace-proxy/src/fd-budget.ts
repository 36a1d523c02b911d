import { readFileSync } from 'node:fs';

/**
 * Descriptors kept free for everything that is not a proxied connection: tool spawns (iptables-restore),
 * the API watches, health and metrics servers, service health-check listeners, manifest reads.
 */
export const RESERVED_FDS = 256;

/**
 * How many descriptors proxied connections may hold in this process: RLIMIT_NOFILE (soft, read from
 * /proc/self/limits) minus RESERVED_FDS. A proxy that used every descriptor would fail its own sync
 * (spawning iptables-restore), health checks and API watches; past the budget it sheds new
 * connections instead, the way a full accept queue would.
 */
export function proxyFdBudget(limitsText?: string): number {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  }
  const m = /^Max open files\s+(\S+)/m.exec(text);
  if (!m || m[1] === 'unlimited') return Number.POSITIVE_INFINITY;
  const soft = Number(m[1]);
  if (!Number.isFinite(soft)) return Number.POSITIVE_INFINITY;
  return Math.max(64, soft - RESERVED_FDS);
}

/** The descriptors proxied connections hold, shared by every proxy socket of the process. */
export class FdBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.used;
  }

  /** Takes `n` descriptors if the budget allows; false means: shed this connection or datagram. */
  tryAcquire(n: number): boolean {
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }

  release(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}
