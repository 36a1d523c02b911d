import { BOUNDS, RECORD_ID, UPSTREAM, benchRecord, type RunningFigure } from './nft-bench-record.js';
import type { NftBenchRow } from './nft-bench-report.js';

const fig = (totalMs: number, kernelMs: number) => ({ totalMs, kernelMs, readMs: 0, operations: 5, transactions: 1 });
const row: NftBenchRow & { endpoints: number } = {
  services: 45_000,
  endpoints: 1,
  cold: fig(40_000, 35_000),
  floorBatchedMs: 33_000,
  floorOneTxMs: Number.NaN,
  fullSync: fig(2_000, 0),
  partial: [fig(600, 560), fig(700, 640), fig(650, 600)],
  partialFloorMs: [500, 550, 520],
  restart: { totalMs: 0, kernelMs: 0, readMs: 0, operations: 0, transactions: 0 },
  endToEndMs: null,
  endToEndRssMb: null,
};
const running: RunningFigure = { services: 45_000, endpoints: 1, firstSyncMs: 52_345, rssMb: 480.4, peakRssMb: 590.6, changeWallMs: [900, 700, 800] };

describe('nftables bench record', () => {
  const rec = benchRecord({ command: 'npm run bench:nftables -- --record', measuredAt: '2026-12-06T21:00:00.000Z', load1: [1, 2], rows: [row], running: [running] });
  const find = (metric: string, source: string, label?: RegExp) => rec.series.find((s) => s.metric === metric && s.source === source && (label === undefined || label.test(s.label)));

  it('names itself after its file and keeps the run', () => {
    expect(rec.id).toBe(RECORD_ID);
    expect(rec.load1).toEqual([1, 2]);
    expect(rec.series.every((s) => s.mode === 'nftables')).toBe(true);
  });

  it('records the running proxy in seconds and MB, medians of the changes', () => {
    expect(find('cold-start-s', 'ours', /spawn/)?.points).toEqual([{ services: 45_000, endpoints: 1, value: 52.345 }]);
    expect(find('rss-mb', 'ours')?.points[0]?.value).toBe(480);
    expect(find('peak-rss-mb', 'ours')?.points[0]?.value).toBe(591);
    expect(find('incremental-sync-s', 'ours', /API server/)?.points[0]?.value).toBe(0.8);
  });

  it("records our own compute of a change apart from nft's, and the kernel floors", () => {
    expect(find('change-compute-ms', 'ours')?.points[0]?.value).toBe(50);
    expect(find('cold-start-s', 'kernel')?.points[0]?.value).toBe(33);
    expect(find('incremental-sync-s', 'kernel')?.points[0]?.value).toBe(0.52);
  });

  it('leaves out what was not run (no restart) and keeps upstream and the bounds', () => {
    expect(find('restart-s', 'ours')).toBeUndefined();
    expect(rec.series.filter((s) => s.source === 'upstream')).toEqual(UPSTREAM);
    expect(rec.series.filter((s) => s.source === 'bound')).toEqual(BOUNDS);
    expect(find('cold-start-s', 'bound')?.points).toContainEqual({ services: 45_000, endpoints: 1, value: 60 });
  });
});
