/**
 * The nftables bench's figures as docs/perf/data/nftables-scale.json (--record), in the shape every
 * bench writes for the chart generator: per mode, metric and source (ours, the kernel tool's floor
 * in the same run, upstream's published figures, the bounds) a series of points over the
 * number of services. Pure, so the spec can check what is written.
 */
import type { PerfData, PerfPoint, PerfSeries } from '../charts/perf-data.js';
import { median, type NftBenchRow } from './nft-bench-report.js';

export const RECORD_ID = 'nftables-scale';

/** The shared data format (tools/bench/src/charts/perf-data.ts), narrowed to this bench's mode. */
export type Point = PerfPoint;
export type Series = PerfSeries & { readonly mode: 'nftables' };
export type BenchRecord = PerfData;

/** What the running proxy (running-proxy-memory.ts, --proxy-mode=nftables) measured at one size. */
export interface RunningFigure {
  readonly services: number;
  readonly endpoints: number;
  readonly firstSyncMs: number;
  readonly rssMb: number;
  readonly peakRssMb: number;
  /** Update acknowledged → the new endpoint in the kernel, per change. */
  readonly changeWallMs: readonly number[];
}

/** Upstream's published figures (kubernetes issues and PRs named in each label). */
export const UPSTREAM: readonly Series[] = [
  {
    mode: 'nftables',
    metric: 'full-resync-s',
    source: 'upstream',
    label: 'upstream full sync at 44k × 1 before its 2026 fixes (kubernetes #139513)',
    points: [{ services: 44125, endpoints: 1, value: 16 * 60 + 44 }],
  },
  {
    mode: 'nftables',
    metric: 'full-resync-s',
    source: 'upstream',
    label: 'upstream full sync at 44k × 1 after its fixes (kubernetes PRs #140723, #137536)',
    points: [{ services: 44125, endpoints: 1, value: 6 * 60 + 34 }],
  },
  {
    mode: 'nftables',
    metric: 'incremental-sync-s',
    source: 'upstream',
    label: 'upstream incremental sync at 44k × 1 with netlink listing (kubernetes #139513, PR #137536)',
    points: [{ services: 44125, endpoints: 1, value: 1.33 }],
  },
  {
    mode: 'nftables',
    metric: 'restart-s',
    source: 'upstream',
    label: 'upstream restart at 10k × 2 (kubernetes PR #130119, issue #139328)',
    points: [{ services: 10000, endpoints: 2, value: 3 * 60 + 14 }],
  },
  {
    mode: 'nftables',
    metric: 'rss-mb',
    source: 'upstream',
    label: 'upstream RSS at 10k × 2 (260 MiB, kubernetes PR #126013)',
    points: [{ services: 10000, endpoints: 2, value: Math.round(260 * 1.048576) }],
  },
];

/** Issue 24's bounds for the nftables mode. */
export const BOUNDS: readonly Series[] = [
  { mode: 'nftables', metric: 'cold-start-s', source: 'bound', label: 'bound: cold start ≤ 10 s at 10k, ≤ 60 s at 45k × 1', points: [{ services: 10000, endpoints: 5, value: 10 }, { services: 45000, endpoints: 1, value: 60 }] },
  { mode: 'nftables', metric: 'rss-mb', source: 'bound', label: 'bound: RSS ≤ 200 MB at 10k × 5, ≤ 450 MB at 30k × 5, ≤ 600 MB at 45k × 1', points: [{ services: 10000, endpoints: 5, value: 200 }, { services: 30000, endpoints: 5, value: 450 }, { services: 45000, endpoints: 1, value: 600 }] },
  { mode: 'nftables', metric: 'incremental-sync-s', source: 'bound', label: 'bound: one-endpoint change ≤ 1 s at 45k × 1', points: [{ services: 45000, endpoints: 1, value: 1 }] },
  { mode: 'nftables', metric: 'change-compute-ms', source: 'bound', label: 'bound: one-endpoint change ≤ 50 ms of our own compute at 10k', points: [{ services: 10000, endpoints: 5, value: 50 }] },
];

const s3 = (ms: number) => Math.round(ms) / 1000;

/** A series of points in the order of their size (the chart draws them as a line). */
function series(metric: Series['metric'], source: Series['source'], label: string, points: Point[]): Series[] {
  points.sort((a, b) => a.services - b.services || a.endpoints - b.endpoints);
  return points.length > 0 ? [{ mode: 'nftables', metric, source, label, points }] : [];
}

/** The record of one run: the in-process rows, the running-proxy figures, upstream's and the bounds. */
export function benchRecord(opts: {
  command: string;
  measuredAt: string;
  load1: readonly [number, number];
  rows: ReadonlyArray<NftBenchRow & { endpoints: number }>;
  running: readonly RunningFigure[];
}): BenchRecord {
  const { rows, running } = opts;
  const at = (r: { services: number; endpoints: number }, value: number): Point => ({ services: r.services, endpoints: r.endpoints, value });
  const out: Series[] = [
    ...series('cold-start-s', 'ours', 'kube-proxy-ts cold start (spawn → rules in the kernel, running proxy against the test API server)', running.map((r) => at(r, s3(r.firstSyncMs)))),
    ...series('cold-start-s', 'ours', 'kube-proxy-ts cold-start sync into an empty table (in-process: render, plan and nft)', rows.map((r) => at(r, s3(r.cold.totalMs)))),
    ...series('cold-start-s', 'kernel', 'nft -f of the same transactions into a fresh namespace (kernel floor)', rows.map((r) => at(r, s3(r.floorBatchedMs)))),
    ...series('full-resync-s', 'ours', 'kube-proxy-ts full sync with nothing changed', rows.map((r) => at(r, s3(r.fullSync.totalMs)))),
    ...series('restart-s', 'ours', 'kube-proxy-ts restart over its own table (in-process)', rows.filter((r) => r.restart.transactions > 0).map((r) => at(r, s3(r.restart.totalMs)))),
    ...series('rss-mb', 'ours', 'kube-proxy-ts running proxy RSS, settled', running.map((r) => at(r, Math.round(r.rssMb)))),
    ...series('peak-rss-mb', 'ours', 'kube-proxy-ts running proxy peak RSS (VmHWM)', running.map((r) => at(r, Math.round(r.peakRssMb)))),
    ...series('incremental-sync-s', 'ours', 'one-endpoint change through the API server → in the kernel (median)', running.filter((r) => r.changeWallMs.length > 0).map((r) => at(r, s3(median(r.changeWallMs))))),
    ...series('incremental-sync-s', 'ours', 'one-endpoint change, in-process sync incl. nft (median)', rows.map((r) => at(r, s3(median(r.partial.map((p) => p.totalMs)))))),
    ...series('incremental-sync-s', 'kernel', 'nft -f of the same transaction (kernel floor, median)', rows.map((r) => at(r, s3(median(r.partialFloorMs))))),
    ...series('change-compute-ms', 'ours', 'one-endpoint change, our own compute (sync less nft, median)', rows.map((r) => at(r, Math.round(median(r.partial.map((p) => p.totalMs - p.kernelMs)) * 10) / 10))),
    ...UPSTREAM,
    ...BOUNDS,
  ];
  return { id: RECORD_ID, command: opts.command, measuredAt: opts.measuredAt, load1: opts.load1, series: out };
}
