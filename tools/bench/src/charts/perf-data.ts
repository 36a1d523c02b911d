/**
 * The figures every bench records with `--record`: one `docs/perf/data/<id>.json` per bench id, in the
 * format the README's Performance section and the chart writer share. Parsing is strict about shape
 * (a chart drawn from a typo would be a wrong chart) but tolerant of files that are absent: the writer
 * draws whatever benches have run.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PERF_MODES = ['iptables-legacy', 'iptables-nft', 'nftables', 'ipvs', 'userspace'] as const;
export type PerfMode = (typeof PERF_MODES)[number];

/** Seconds or milliseconds: drawn on the time chart. */
export const TIME_METRICS = ['cold-start-s', 'restart-s', 'full-resync-s', 'incremental-sync-s', 'change-compute-ms', 'dry-run-s'] as const;
/** Megabytes: drawn on the memory chart. */
export const MEMORY_METRICS = ['rss-mb', 'peak-rss-mb', 'dry-run-peak-rss-mb'] as const;
export type PerfMetric = (typeof TIME_METRICS)[number] | (typeof MEMORY_METRICS)[number];

export const PERF_SOURCES = ['ours', 'kernel', 'upstream', 'bound'] as const;
export type PerfSource = (typeof PERF_SOURCES)[number];

export interface PerfPoint {
  readonly services: number;
  readonly endpoints: number;
  readonly value: number;
}

export interface PerfSeries {
  readonly mode: PerfMode;
  readonly metric: PerfMetric;
  readonly source: PerfSource;
  readonly label: string;
  readonly points: readonly PerfPoint[];
}

export interface PerfData {
  readonly id: string;
  readonly command: string;
  readonly measuredAt: string;
  /** 1-minute load average at the start and the end of the run. */
  readonly load1: readonly [number, number];
  readonly series: readonly PerfSeries[];
}

const METRICS: readonly string[] = [...TIME_METRICS, ...MEMORY_METRICS];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function finite(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${what} is not a finite number`);
  return v;
}

function text(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new Error(`${what} is not a string`);
  return v;
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], what: string): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) throw new Error(`${what} ${JSON.stringify(v)} is not one of ${allowed.join(', ')}`);
  return v as T;
}

function parsePoint(v: unknown, what: string): PerfPoint {
  if (!isRecord(v)) throw new Error(`${what} is not an object`);
  const services = finite(v['services'], `${what}.services`);
  if (services <= 0) throw new Error(`${what}.services must be positive`);
  return { services, endpoints: finite(v['endpoints'], `${what}.endpoints`), value: finite(v['value'], `${what}.value`) };
}

function parseSeries(v: unknown, what: string): PerfSeries {
  if (!isRecord(v)) throw new Error(`${what} is not an object`);
  const points = v['points'];
  if (!Array.isArray(points)) throw new Error(`${what}.points is not an array`);
  return {
    mode: oneOf(v['mode'], PERF_MODES, `${what}.mode`),
    metric: oneOf(v['metric'], METRICS, `${what}.metric`) as PerfMetric,
    source: oneOf(v['source'], PERF_SOURCES, `${what}.source`),
    label: text(v['label'], `${what}.label`),
    points: points.map((p, i) => parsePoint(p, `${what}.points[${i}]`)),
  };
}

/** One data file's text; `expectedId` is its file name without `.json`, which its `id` must equal. */
export function parsePerfData(source: string, expectedId: string): PerfData {
  const v: unknown = JSON.parse(source);
  if (!isRecord(v)) throw new Error('not a JSON object');
  const id = text(v['id'], 'id');
  if (id !== expectedId) throw new Error(`id ${JSON.stringify(id)} does not match the file name ${expectedId}.json`);
  const load = v['load1'];
  if (!Array.isArray(load) || load.length !== 2) throw new Error('load1 is not [start, end]');
  const series = v['series'];
  if (!Array.isArray(series)) throw new Error('series is not an array');
  return {
    id,
    command: text(v['command'], 'command'),
    measuredAt: text(v['measuredAt'], 'measuredAt'),
    load1: [finite(load[0], 'load1[0]'), finite(load[1], 'load1[1]')],
    series: series.map((s, i) => parseSeries(s, `series[${i}]`)),
  };
}

export interface PerfDataSet {
  /** Valid files, sorted by id (so the charts do not depend on directory order). */
  readonly files: readonly PerfData[];
  /** `<file>: <why>` for each file that was skipped. */
  readonly problems: readonly string[];
}

/** Every `*.json` of the folder; a missing folder is an empty set, a malformed file a problem. */
export function readPerfDataDir(dir: string): PerfDataSet {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return { files: [], problems: [] };
  }
  const files: PerfData[] = [];
  const problems: string[] = [];
  for (const name of names.sort()) {
    try {
      files.push(parsePerfData(readFileSync(join(dir, name), 'utf8'), name.slice(0, -'.json'.length)));
    } catch (err) {
      problems.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { files, problems };
}

/** Writes one bench's figures as `<dir>/<id>.json` (pretty, trailing newline), replacing the last run's. */
export function writePerfData(dir: string, data: PerfData): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${data.id}.json`);
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
  return path;
}

/** The 1-minute load average now (0 where /proc/loadavg cannot be read). */
export function loadAverage1(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]) || 0;
  } catch {
    return 0;
  }
}
