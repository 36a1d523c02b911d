/* Assertions on probe results shared by the datapath suites; each failure message carries the probe summary. */
import { describeProbe, waitFor, type ProbeResult } from '@kube-proxy/testing-netns';

export function fail(msg: string): never {
  throw new Error(msg);
}

/** `pod` answered between lo and hi of the tries. */
export function within(r: ProbeResult, pod: string, lo: number, hi: number): void {
  const n = r.byPod[pod] ?? 0;
  if (n < lo || n > hi) fail(`${pod} answered ${n} times, want ${lo}..${hi}: ${describeProbe(r)}`);
}

export function allOk(r: ProbeResult, what: string): void {
  if (r.ok !== r.count) fail(`${what}: ${describeProbe(r)}`);
}

/** No pod outside `pods` answered. */
export function onlyPods(r: ProbeResult, pods: readonly string[], what: string): void {
  const extra = Object.keys(r.byPod).filter((p) => !pods.includes(p));
  if (extra.length > 0) fail(`${what}: unexpected pods ${extra.join(',')}: ${describeProbe(r)}`);
}

/** Every pod of `pods` answered at least once. */
export function hitsAll(r: ProbeResult, pods: readonly string[], what: string): void {
  const missing = pods.filter((p) => !r.byPod[p]);
  if (missing.length > 0) fail(`${what}: ${missing.join(',')} never answered: ${describeProbe(r)}`);
}

/** The pods saw no source address outside `sources`. */
export function onlySources(r: ProbeResult, sources: readonly string[], what: string): void {
  const extra = Object.keys(r.sources).filter((s) => !sources.includes(s));
  if (extra.length > 0) fail(`${what}: unexpected sources ${extra.join(',')}: ${describeProbe(r)}`);
}

/**
 * Probes (every 100 ms, bounded by `timeoutMs`) until `done` accepts a result; fails with the poll
 * count and the last result.
 */
export async function pollProbe(
  what: string,
  probeOnce: () => Promise<ProbeResult>,
  done: (r: ProbeResult) => boolean,
  timeoutMs: number,
): Promise<ProbeResult> {
  let last: ProbeResult | undefined;
  let polls = 0;
  return waitFor(
    what,
    async () => {
      polls++;
      last = await probeOnce();
      return done(last) ? last : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  ).catch((e: Error) => fail(`${e.message} (${polls} polls); last: ${last ? describeProbe(last) : '-'}`));
}
