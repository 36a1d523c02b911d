/**
 * `node tools/bench/dist/charts/write-charts.js [--data=docs/perf/data] [--out=docs/perf]`: reads every
 * recorded bench figure and (re)writes the per-mode SVG charts the README shows. Run last by
 * `npm run bench:all`; cheap enough to run alone after any single bench's `--record`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { modeCharts } from './mode-charts.js';
import { readPerfDataDir } from './perf-data.js';

export interface WriteChartsResult {
  readonly written: readonly string[];
  readonly problems: readonly string[];
}

/** Writes the charts of `dataDir` into `outDir`; returns the paths written and the files skipped. */
export function writeCharts(dataDir: string, outDir: string): WriteChartsResult {
  const { files, problems } = readPerfDataDir(dataDir);
  const charts = modeCharts(files);
  if (charts.length > 0) mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  for (const chart of charts) {
    const path = join(outDir, chart.name);
    writeFileSync(path, chart.svg);
    written.push(path);
  }
  return { written, problems };
}

function flag(name: string, fallback: string): string {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg === undefined ? fallback : arg.slice(name.length + 3);
}

function main(): void {
  const dataDir = resolve(flag('data', 'docs/perf/data'));
  const outDir = resolve(flag('out', 'docs/perf'));
  const { written, problems } = writeCharts(dataDir, outDir);
  for (const p of problems) console.error(`skipped ${p}`);
  if (written.length === 0) console.log(`no charts: no figures recorded in ${dataDir}`);
  for (const w of written) console.log(`wrote ${w}`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) main();
