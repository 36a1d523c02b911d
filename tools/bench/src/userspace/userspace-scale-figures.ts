/**
 * The userspace scale bench's figures in the shared perf data format (docs/perf/data/userspace-scale.json)
 * and its bounds (issue 24: RSS ≤ 200 MB at 10k and ≤ 450 MB at 30k; a one-endpoint change ≤ 50 ms of
 * our own compute at 10k).
 */
import type { PerfData, PerfPoint, PerfSeries } from '../charts/perf-data.js';
import type { SyncLine } from './sync-line-watcher.js';
import type { UserspaceScaleResult } from './userspace-scale-run.js';

export const USERSPACE_SCALE_ID = 'userspace-scale';

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function changeMedians(syncs: readonly SyncLine[]): { wallMs: number; cpuMs: number } {
  return { wallMs: median(syncs.map((s) => s.elapsedMs)), cpuMs: median(syncs.map((s) => s.cpuMs)) };
}

const round = (v: number, digits: number) => Number(v.toFixed(digits));

function series(metric: PerfSeries['metric'], source: PerfSeries['source'], label: string, points: PerfPoint[]): PerfSeries {
  return { mode: 'userspace', metric, source, label, points };
}

export function userspaceScaleData(results: readonly UserspaceScaleResult[], run: { command: string; measuredAt: string; load1: [number, number] }): PerfData {
  const at = (r: UserspaceScaleResult, value: number): PerfPoint => ({ services: r.services, endpoints: r.endpointsPerService, value });
  const withChanges = results.filter((r) => r.changeSyncs.length > 0);
  return {
    id: USERSPACE_SCALE_ID,
    ...run,
    series: [
      series('cold-start-s', 'ours', 'kube-proxy-ts cold start (spawn → every proxy socket open, capture rules in the kernel)', results.map((r) => at(r, round(r.coldStartMs / 1000, 2)))),
      series('cold-start-s', 'kernel', 'iptables-legacy-restore of the same capture rules into an empty namespace', results.map((r) => at(r, round(r.kernelApplyMs / 1000, 3)))),
      series('incremental-sync-s', 'ours', 'one-endpoint change: sync wall time, iptables-restore included (median)', withChanges.map((r) => at(r, round(changeMedians(r.changeSyncs).wallMs / 1000, 3)))),
      series('change-compute-ms', 'ours', 'one-endpoint change: our own compute, process CPU over the sync (median)', withChanges.map((r) => at(r, round(changeMedians(r.changeSyncs).cpuMs, 1)))),
      series('change-compute-ms', 'bound', 'bound: one-endpoint change ≤ 50 ms of compute at 10k (issue 24)', [{ services: 10_000, endpoints: 5, value: 50 }]),
      series('rss-mb', 'ours', 'settled RSS of the running proxy', results.map((r) => at(r, round(r.rssKiB / 1024, 1)))),
      series('peak-rss-mb', 'ours', 'peak RSS (VmHWM) of the running proxy', results.map((r) => at(r, round(r.peakKiB / 1024, 1)))),
      series('rss-mb', 'bound', 'bound: RSS ≤ 200 MB at 10k, ≤ 450 MB at 30k (issue 24)', [
        { services: 10_000, endpoints: 5, value: 200 },
        { services: 30_000, endpoints: 5, value: 450 },
      ]),
    ],
  };
}
