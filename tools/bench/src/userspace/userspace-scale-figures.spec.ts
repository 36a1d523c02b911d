import { parsePerfData } from '../charts/perf-data.js';
import { changeMedians, median, userspaceScaleData } from './userspace-scale-figures.js';
import type { UserspaceScaleResult } from './userspace-scale-run.js';

const result = (services: number, changes: number[]): UserspaceScaleResult => ({
  services,
  endpointsPerService: 5,
  coldStartMs: 41_764,
  firstSync: { at: 0, elapsedMs: 25_338, cpuMs: 5573.3 },
  kernelApplyMs: 438,
  listeners: services + 2,
  natRules: services * 2,
  rssKiB: 295 * 1024,
  peakKiB: 309 * 1024,
  changeSyncs: changes.map((cpuMs, i) => ({ at: i, elapsedMs: 100 + i, cpuMs })),
});

describe('userspace scale figures', () => {
  it('takes medians of the change syncs', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(Number.isNaN(median([]))).toBe(true);
    expect(changeMedians(result(10, [27.9, 27.5, 10.5]).changeSyncs)).toEqual({ wallMs: 101, cpuMs: 27.5 });
  });

  it('writes the shared perf data format, with the issue bounds, that the chart writer reads back', () => {
    const data = userspaceScaleData([result(1000, [5]), result(10_000, [27.9, 27.5, 10.5])], { command: 'npm run bench:userspace-scale -- --record', measuredAt: '2026-12-06T21:00:00.000Z', load1: [8.4, 9] });
    expect(parsePerfData(JSON.stringify(data), 'userspace-scale')).toEqual(data);
    const find = (metric: string, source: string) => data.series.find((s) => s.metric === metric && s.source === source)!;
    expect(find('cold-start-s', 'ours').points).toEqual([
      { services: 1000, endpoints: 5, value: 41.76 },
      { services: 10_000, endpoints: 5, value: 41.76 },
    ]);
    expect(find('cold-start-s', 'kernel').points[1]).toEqual({ services: 10_000, endpoints: 5, value: 0.438 });
    expect(find('change-compute-ms', 'ours').points[1]!.value).toBe(27.5);
    expect(find('rss-mb', 'ours').points[1]!.value).toBe(295);
    expect(find('rss-mb', 'bound').points).toEqual([
      { services: 10_000, endpoints: 5, value: 200 },
      { services: 30_000, endpoints: 5, value: 450 },
    ]);
    expect(find('change-compute-ms', 'bound').points).toEqual([{ services: 10_000, endpoints: 5, value: 50 }]);
  });
});
