/**
 * Which charts the perf data makes: per mode, time against services (`<mode>-time.svg`) and memory
 * against services (`<mode>-memory.svg`). Series keep their bench's label; how they are drawn says
 * where the figure comes from (ours solid, the kernel tool's floor dotted, upstream's published
 * figures as marks, the bounds dashed).
 */
import { MEMORY_METRICS, PERF_MODES, TIME_METRICS, type PerfData, type PerfMetric, type PerfMode, type PerfSeries, type PerfSource } from './perf-data.js';
import { renderChart, type ChartLine, type ChartSpec, type LineStyle, type Marker } from './svg-chart.js';
import { formatNumber, formatSeconds } from './svg-text.js';

/** The endpoint count most benches use; other counts are noted beside their point (`×1`). */
const USUAL_ENDPOINTS = 5;
/** The range of service counts: every chart's x axis covers it. */
const X_SPAN: readonly [number, number] = [1000, 45_000];

const MODE_TITLES: Readonly<Record<PerfMode, string>> = {
  'iptables-legacy': 'iptables (legacy)',
  'iptables-nft': 'iptables (nft)',
  nftables: 'nftables',
  ipvs: 'IPVS',
  userspace: 'userspace',
};

/** A colour per metric (colour-blind-safe Okabe–Ito hues), so ours, the floor and the bound of one metric match. */
const METRIC_COLORS: Readonly<Record<PerfMetric, string>> = {
  'cold-start-s': '#0072b2',
  'restart-s': '#e69f00',
  'full-resync-s': '#cc79a7',
  'incremental-sync-s': '#009e73',
  'change-compute-ms': '#d55e00',
  'dry-run-s': '#56b4e9',
  'rss-mb': '#0072b2',
  'peak-rss-mb': '#e69f00',
  'dry-run-peak-rss-mb': '#009e73',
};

const SOURCE_STYLE: Readonly<Record<PerfSource, { style: LineStyle; marker: Marker }>> = {
  ours: { style: 'solid', marker: 'circle' },
  kernel: { style: 'dotted', marker: 'square' },
  upstream: { style: 'marks', marker: 'diamond' },
  bound: { style: 'bound', marker: 'none' },
};

export interface ChartFile {
  /** File name inside docs/perf/. */
  readonly name: string;
  readonly svg: string;
}

interface Sourced {
  readonly file: PerfData;
  readonly series: PerfSeries;
}

function chartLine(series: PerfSeries, toY: (v: number) => number, formatValue: (v: number) => string): ChartLine {
  const { style, marker } = SOURCE_STYLE[series.source];
  return {
    label: series.label,
    color: METRIC_COLORS[series.metric],
    style,
    marker,
    points: series.points.map((p) => ({
      x: p.services,
      y: toY(p.value),
      ...(p.endpoints !== USUAL_ENDPOINTS ? { note: `×${formatNumber(p.endpoints)}` } : {}),
      title: `${series.label}: ${formatNumber(p.services)} services × ${formatNumber(p.endpoints)} endpoints = ${formatValue(toY(p.value))}`,
    })),
  };
}

/** Characters of a footer line that fit the chart's width at the footer's font size. */
const FOOTER_MAX = 120;

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** Two lines per data file that contributed: what ran it, when, and how busy the machine was. */
function footer(sourced: readonly Sourced[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const { file } of sourced) {
    if (seen.has(file.id)) continue;
    seen.add(file.id);
    // Two lines a file: the footer must fit the chart's width in a README.
    out.push(`${file.id}: ${truncate(file.command, FOOTER_MAX)}`);
    out.push(`    measured ${file.measuredAt}, 1-minute load ${formatNumber(file.load1[0])} → ${formatNumber(file.load1[1])} (start → end)`);
  }
  return out;
}

function timeChart(mode: PerfMode, sourced: readonly Sourced[]): ChartSpec {
  // change-compute is recorded in ms; the chart is in seconds on a log axis, so both fit.
  const toSeconds = (metric: PerfMetric) => (metric.endsWith('-ms') ? (v: number) => v / 1000 : (v: number) => v);
  return {
    title: `${MODE_TITLES[mode]}: time against the number of services`,
    xLabel: 'Services (log scale; 5 endpoints each unless marked ×N)',
    yLabel: 'Time (log scale)',
    y: 'log',
    formatY: formatSeconds,
    xSpan: X_SPAN,
    lines: sourced.map(({ series }) => chartLine(series, toSeconds(series.metric), formatSeconds)),
    footer: footer(sourced),
  };
}

function memoryChart(mode: PerfMode, sourced: readonly Sourced[]): ChartSpec {
  const mb = (v: number) => `${formatNumber(v)} MB`;
  return {
    title: `${MODE_TITLES[mode]}: memory against the number of services`,
    xLabel: 'Services (log scale; 5 endpoints each unless marked ×N)',
    yLabel: 'Resident memory (MB)',
    y: 'linear',
    formatY: mb,
    xSpan: X_SPAN,
    lines: sourced.map(({ series }) => chartLine(series, (v) => v, mb)),
    footer: footer(sourced),
  };
}

/** Every chart the data makes, in mode order; a mode/kind without a series makes no chart. */
export function modeCharts(files: readonly PerfData[]): ChartFile[] {
  const out: ChartFile[] = [];
  const all: Sourced[] = files.flatMap((file) => file.series.map((series) => ({ file, series })));
  const time: readonly string[] = TIME_METRICS;
  const memory: readonly string[] = MEMORY_METRICS;
  for (const mode of PERF_MODES) {
    const ofMode = all.filter((s) => s.series.mode === mode);
    const timed = ofMode.filter((s) => time.includes(s.series.metric));
    const sized = ofMode.filter((s) => memory.includes(s.series.metric));
    if (timed.length > 0) out.push({ name: `${mode}-time.svg`, svg: renderChart(timeChart(mode, timed)) });
    if (sized.length > 0) out.push({ name: `${mode}-memory.svg`, svg: renderChart(memoryChart(mode, sized)) });
  }
  return out;
}
