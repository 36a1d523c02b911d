/**
 * Where a `kube-proxy --cleanup -v=4` run spent its time, read from its own log: each klog-style line
 * (`I1206 08:29:15.856000 message …`) carries the wall-clock time it was written, so the gaps between
 * "Detected host capabilities" and each "Cleaned up backend mode=X" line are the backends' cleanups.
 */

/** Epoch ms of a log line's `HH:MM:SS.ffffff` on the day of `dayOf` (the bench runs in one day, UTC). */
function lineTime(line: string, dayOf: number): number | undefined {
  const m = /^[IWE]\d{4} (\d\d):(\d\d):(\d\d(?:\.\d+)?) /.exec(line);
  if (!m) return undefined;
  const day = new Date(dayOf);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), Number(m[1]), Number(m[2])) + Math.round(Number(m[3]) * 1000);
}

export interface CleanupPhases {
  /** Spawn → host capabilities detected (Node start, module loading, tool probes). */
  readonly startupMs: number;
  /** Each backend's cleanup, in the order they ran. */
  readonly backends: readonly { readonly mode: string; readonly ms: number }[];
}

export function cleanupPhases(log: string, spawnedAt: number): CleanupPhases | undefined {
  let detected: number | undefined;
  let last: number | undefined;
  const backends: { mode: string; ms: number }[] = [];
  for (const line of log.split('\n')) {
    const t = lineTime(line, spawnedAt);
    if (t === undefined) continue;
    if (detected === undefined && line.includes('Detected host capabilities')) detected = last = t;
    const done = /Cleaned up backend mode="?([\w-]+)"?/.exec(line);
    if (done && last !== undefined) {
      backends.push({ mode: done[1] as string, ms: t - last });
      last = t;
    }
  }
  return detected === undefined ? undefined : { startupMs: detected - spawnedAt, backends };
}
