/**
 * The chart data of a bench run: docs/perf/data/<id>.json, one file per bench id, overwritten by each
 * run given --record. Series are keyed by mode, metric and source; upstream's published figures and
 * the bounds are added beside the measured ones.
 */
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PerfMetric, PerfPoint, PerfSeries, PerfSource } from '../charts/perf-data.js';

export type Mode = 'iptables-legacy' | 'iptables-nft';
export type Source = PerfSource;
export type Metric = PerfMetric;
type Point = PerfPoint;
/** A perf-data series (charts/perf-data.ts) that this record still adds points to. */
type Series = Omit<PerfSeries, 'mode' | 'points'> & { readonly mode: Mode; readonly points: Point[] };

const LABELS: Record<Source, (metric: Metric) => string> = {
  ours: (m) =>
    ({
      'cold-start-s': 'kube-proxy-ts cold start (spawn → rules in the kernel)',
      'restart-s': 'kube-proxy-ts restart',
      'full-resync-s': 'kube-proxy-ts full resync',
      'incremental-sync-s': 'kube-proxy-ts one-endpoint change (compute + iptables-restore)',
      'change-compute-ms': 'kube-proxy-ts one-endpoint change, own compute: CPU time of trackers + partial render (median of 5)',
      'rss-mb': 'kube-proxy-ts running proxy RSS, 20 s after the first sync',
      'peak-rss-mb': 'kube-proxy-ts running proxy peak RSS (VmHWM)',
      'dry-run-s': 'kube-proxy-ts --dry-run --once (whole process)',
      'dry-run-peak-rss-mb': 'kube-proxy-ts --dry-run --once peak RSS',
    })[m],
  kernel: (m) =>
    m === 'dry-run-s'
      ? 'iptables-legacy-restore of the dry run\'s output (empty namespace)'
      : m === 'incremental-sync-s'
        ? 'iptables-restore of the partial payload'
        : 'iptables-restore of the same tables into an empty namespace',
  upstream: () => 'upstream kube-proxy iptables restart resync, 10k services × 2 endpoints (kubernetes PR #130119)',
  bound: (m) => `issue 24 bound (${m})`,
};

/** The repository root (tools/bench/dist/iptables → ../../../..). */
function repoRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
}

export class ScaleRecord {
  private readonly series: Series[] = [];
  private readonly loadStart = ScaleRecord.load1();

  constructor(
    private readonly id: string,
    private readonly command: string,
  ) {}

  /** The 1-minute load average now. */
  static load1(): number {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  }

  point(mode: Mode, metric: Metric, source: Source, size: { services: number; endpoints: number }, value: number): void {
    let s = this.series.find((x) => x.mode === mode && x.metric === metric && x.source === source);
    if (!s) this.series.push((s = { mode, metric, source, label: LABELS[source](metric), points: [] }));
    s.points.push({ services: size.services, endpoints: size.endpoints, value: Math.round(value * 1000) / 1000 });
  }

  /** The bounds at the sizes it names (10k and 30k), and upstream's published figure (once, before writing). */
  private bounds(): void {
    const at = (n: number) => this.series.some((s) => s.source === 'ours' && s.points.some((p) => p.services === n));
    for (const mode of ['iptables-legacy', 'iptables-nft'] as const) {
      for (const [n, mb] of [[10_000, 200], [30_000, 450]] as const) {
        if (!at(n)) continue;
        this.point(mode, 'rss-mb', 'bound', { services: n, endpoints: 5 }, mb);
        this.point(mode, 'dry-run-peak-rss-mb', 'bound', { services: n, endpoints: 5 }, mb);
      }
      if (at(10_000)) this.point(mode, 'change-compute-ms', 'bound', { services: 10_000, endpoints: 5 }, 50);
      this.point(mode, 'restart-s', 'upstream', { services: 10_000, endpoints: 2 }, 40.1);
    }
  }

  /**
   * Writes docs/perf/data/<id>.json with what is measured so far; returns its path. With `merge`, the
   * file's points at sizes this run did not measure are kept (a long size run on its own, e.g. 45k),
   * and its command and load are listed beside this run's.
   */
  write(merge = false): string {
    const measured = this.series.filter((s) => s.source === 'ours' || s.source === 'kernel');
    this.series.splice(0, this.series.length, ...measured);
    const file = join(repoRoot(), 'docs', 'perf', 'data', `${this.id}.json`);
    const earlier = merge ? this.keepEarlier(file) : undefined;
    this.bounds();
    mkdirSync(dirname(file), { recursive: true });
    const command = earlier ? `${earlier.command}; ${this.command}` : this.command;
    // The data format's [start, end]: a merged file starts with the earliest run's load.
    const load1 = [earlier?.load1[0] ?? this.loadStart, ScaleRecord.load1()];
    const doc = { id: this.id, command, measuredAt: new Date().toISOString(), load1, series: this.series };
    writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
    return file;
  }

  /** Adds the file's measured points at sizes this run has none of; returns its command and loads. */
  private keepEarlier(file: string): { command: string; load1: number[] } | undefined {
    let doc: { command: string; load1: number[]; series: Series[] };
    try {
      doc = JSON.parse(readFileSync(file, 'utf8')) as typeof doc;
    } catch {
      return undefined;
    }
    const key = (s: Pick<Series, 'mode' | 'metric' | 'source'>, services: number) => `${s.mode}|${s.metric}|${s.source}|${services}`;
    const mine = new Set(this.series.flatMap((s) => s.points.map((p) => key(s, p.services))));
    for (const old of doc.series) {
      if (old.source !== 'ours' && old.source !== 'kernel') continue;
      for (const p of old.points) if (!mine.has(key(old, p.services))) this.point(old.mode, old.metric, old.source, p, p.value);
    }
    for (const s of this.series) s.points.sort((a, b) => a.services - b.services);
    return { command: doc.command.split('; ').filter((c) => c !== this.command).join('; '), load1: doc.load1 };
  }
}
