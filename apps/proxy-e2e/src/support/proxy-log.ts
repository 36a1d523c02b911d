/**
 * Reading the proxy's klog-style log (`I1201 21:43:09.473000 Message key="value" …`) for the fault
 * suite: when each sync attempt started and failed, so a test can show that a failed sync is retried
 * after syncPeriod (upstream: `Sync failed` with `retryingTime`, then the runner's RetryAfter).
 */

export interface LogLine {
  readonly level: string;
  /** Milliseconds since midnight of the line's own clock (klog prints no year or zone). */
  readonly msOfDay: number;
  readonly text: string;
}

export function parseLogLines(log: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of log.split('\n')) {
    const m = /^([IWEF])\d{4} (\d\d):(\d\d):(\d\d)\.(\d{1,6})\s+(.*)$/.exec(line);
    if (!m) continue;
    const frac = Number(m[5]!.padEnd(6, '0')) / 1000;
    out.push({ level: m[1]!, msOfDay: ((Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4])) * 1000 + frac, text: m[6]! });
  }
  return out;
}

export interface RetryEvidence {
  /** How many sync attempts of the family failed. */
  readonly failedAttempts: number;
  /** For each failed attempt followed by another one: ms from "Sync failed" to the next "Syncing iptables rules". */
  readonly retryGapsMs: readonly number[];
}

/** The failed sync attempts of `family` in `log` and the delay before each retry. */
export function syncRetries(log: string, family: 'IPv4' | 'IPv6'): RetryEvidence {
  const fam = `ipFamily="${family}"`;
  const lines = parseLogLines(log).filter((l) => l.text.includes(fam));
  let failedAttempts = 0;
  const gaps: number[] = [];
  let failedAt: number | undefined;
  for (const l of lines) {
    if (l.text.startsWith('Sync failed')) {
      failedAttempts++;
      failedAt = l.msOfDay;
    } else if (l.text.startsWith('Syncing iptables rules') && failedAt !== undefined) {
      let gap = l.msOfDay - failedAt;
      if (gap < 0) gap += 24 * 3600 * 1000; // across midnight
      gaps.push(gap);
      failedAt = undefined;
    }
  }
  return { failedAttempts, retryGapsMs: gaps };
}
