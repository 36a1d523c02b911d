/**
 * What an idle process costs, read from /proc: CPU time (utime + stime of /proc/PID/stat, in clock
 * ticks) and VmRSS sampled over a window. The CPU share is the ticks used over the window's wall
 * time, so a process that wakes for a 300 ms sync every 30 s shows as 1%, however the samples fall.
 */
import { readFileSync } from 'node:fs';
import { statusKiB } from '../common/process-memory.js';

/** Linux's USER_HZ: /proc/PID/stat counts CPU time in these (getconf CLK_TCK; 100 on every Linux ABI in use). */
export const CLOCK_TICKS_PER_S = 100;

/** CPU time of a process in clock ticks: its own, and that of the children it has waited for (the tools it ran). */
export interface CpuTicks {
  readonly own: number;
  readonly children: number;
}

/**
 * utime + stime (fields 14 and 15) and cutime + cstime (16 and 17) of a /proc/PID/stat line. The
 * command name (field 2) is in parentheses and may itself hold spaces and parentheses, so fields
 * are counted after its last ')'.
 */
export function cpuTicksOfStat(stat: string): CpuTicks {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): field N is rest[N - 3].
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(rest[i]));
  if (![utime, stime, cutime, cstime].every((n) => Number.isFinite(n))) throw new Error(`not a /proc/PID/stat line: ${stat.slice(0, 200)}`);
  return { own: utime! + stime!, children: cutime! + cstime! };
}

export function cpuTicks(pid: number): CpuTicks | undefined {
  try {
    return cpuTicksOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

export interface IdleSample {
  /** Milliseconds since the window began. */
  readonly atMs: number;
  readonly cpuTicks: CpuTicks;
  readonly rssKiB: number;
}

export interface IdleFigures {
  readonly windowS: number;
  /** CPU time used in the window over its wall time, in % of one core. */
  readonly cpuPercent: number;
  /** The same for the processes it ran and reaped in the window (iptables-restore, nft, …). */
  readonly childCpuPercent: number;
  readonly rssMinKiB: number;
  readonly rssMedianKiB: number;
  readonly rssMaxKiB: number;
}

/** Summarises samples taken over one window (at least two). */
export function idleFigures(samples: readonly IdleSample[]): IdleFigures {
  if (samples.length < 2) throw new Error('an idle window needs at least two samples');
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const wallS = (last.atMs - first.atMs) / 1000;
  const rss = samples.map((s) => s.rssKiB).sort((a, b) => a - b);
  const percent = (ticks: number) => (ticks / CLOCK_TICKS_PER_S / wallS) * 100;
  return {
    windowS: wallS,
    cpuPercent: percent(last.cpuTicks.own - first.cpuTicks.own),
    childCpuPercent: percent(last.cpuTicks.children - first.cpuTicks.children),
    rssMinKiB: rss[0]!,
    rssMedianKiB: rss[Math.floor(rss.length / 2)]!,
    rssMaxKiB: rss[rss.length - 1]!,
  };
}

/** The process's own CPU ticks in each `bucketMs` of the window: when the work happened (periodic or steady). */
export function cpuTimeline(samples: readonly IdleSample[], bucketMs: number): number[] {
  const first = samples[0];
  if (!first) return [];
  const last = samples[samples.length - 1]!;
  // Sampling drifts by a few ms: a window of 30 s is 6 buckets of 5 s, not 7.
  const count = Math.max(1, Math.round((last.atMs - first.atMs) / bucketMs));
  const buckets: number[] = [];
  let prev = first;
  for (const s of samples.slice(1)) {
    // The ticks since the previous sample belong to the bucket this sample closes.
    const at = Math.min(count - 1, Math.max(0, Math.floor((s.atMs - first.atMs - 1) / bucketMs)));
    buckets[at] = (buckets[at] ?? 0) + s.cpuTicks.own - prev.cpuTicks.own;
    prev = s;
  }
  return Array.from(buckets, (b) => b ?? 0);
}

/** Samples `pid` every `intervalMs` for `windowS` seconds; throws if the process goes away. */
export async function sampleIdle(pid: number, windowS: number, intervalMs = 500): Promise<IdleSample[]> {
  const samples: IdleSample[] = [];
  const start = Date.now();
  const count = Math.max(2, Math.round((windowS * 1000) / intervalMs) + 1);
  for (let i = 0; i < count; i++) {
    if (i > 0) await new Promise((res) => setTimeout(res, start + i * intervalMs - Date.now()));
    const ticks = cpuTicks(pid);
    const rss = statusKiB(pid, 'VmRSS');
    if (ticks === undefined || rss === undefined) throw new Error(`process ${pid} went away while idle`);
    samples.push({ atMs: Date.now() - start, cpuTicks: ticks, rssKiB: rss });
  }
  return samples;
}
