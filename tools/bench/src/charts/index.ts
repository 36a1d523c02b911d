// The perf data format every bench records with --record, and the chart writer that draws it.
export {
  PERF_MODES,
  TIME_METRICS,
  MEMORY_METRICS,
  PERF_SOURCES,
  parsePerfData,
  readPerfDataDir,
  writePerfData,
  loadAverage1,
  type PerfData,
  type PerfDataSet,
  type PerfMetric,
  type PerfMode,
  type PerfPoint,
  type PerfSeries,
  type PerfSource,
} from './perf-data.js';
export { modeCharts, type ChartFile } from './mode-charts.js';
export { writeCharts, type WriteChartsResult } from './write-charts.js';
