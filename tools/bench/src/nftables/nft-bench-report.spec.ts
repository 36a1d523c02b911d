import { fmtMs, fmtRatio, formatReport, median, medianFigure, type NftBenchRow } from './nft-bench-report.js';

const fig = (totalMs: number, kernelMs: number, operations = 10, transactions = 1) => ({ totalMs, kernelMs, readMs: 0, operations, transactions });

function row(over: Partial<NftBenchRow> = {}): NftBenchRow {
  return {
    services: 10_000,
    cold: fig(12_000, 10_000, 180_000, 10),
    floorBatchedMs: 9_000,
    floorOneTxMs: 45_000,
    fullSync: fig(800, 0, 0, 0),
    partial: [fig(30, 20), fig(40, 25), fig(35, 22)],
    partialFloorMs: [20, 18, 22],
    restart: fig(50_000, 49_000, 180_002, 1),
    endToEndMs: 14_000,
    endToEndRssMb: 190.4,
    ...over,
  };
}

describe('nft bench report', () => {
  it('formats times as ms below a second and s above', () => {
    expect(fmtMs(12.34)).toBe('12.3 ms');
    expect(fmtMs(1500)).toBe('1.50 s');
  });

  it('gives no ratio against a zero floor', () => {
    expect(fmtRatio(5, 0)).toBe('–');
    expect(fmtRatio(30, 20)).toBe('1.50×');
  });

  it('takes the middle of an odd list and the mean of the middle two of an even one', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('shows what batching buys (one transaction over the batched floor) and the kernel-over-floor ratio', () => {
    const text = formatReport([row()], []).join('\n');
    expect(text).toContain('| 10000 | 180000 / 10 | 2.00 s | 10.00 s | 12.00 s | 9.00 s | 45.00 s | 1.11× | 5.00× |');
  });

  it('says a partial sync meets the 2× target on the medians, and misses it above', () => {
    expect(formatReport([row()], []).join('\n')).toContain('35.0 ms [30/40/35] | 20.0 ms [20/18/22] | 1.75× (meets)');
    const slow = row({ partial: [fig(50, 20)], partialFloorMs: [20] });
    expect(formatReport([slow], []).join('\n')).toContain('2.50× (MISSES)');
  });

  it('judges kube-proxy --once against 15 s, and prints a dash when it was not run', () => {
    expect(formatReport([row({ endToEndMs: 16_000 })], []).join('\n')).toContain('16.00 s (MISSES)');
    expect(formatReport([row({ endToEndMs: null, endToEndRssMb: null })], []).join('\n')).toMatch(/\| – \| – \| [0-9.]+ ms \[[0-9./]+\] \|$/m);
  });

  it("reports kube-proxy --once's peak RSS beside its time", () => {
    expect(formatReport([row()], []).join('\n')).toMatch(/14\.00 s \(meets\) \| 190 MB \| /m);
  });

  it("reports a partial sync's own compute (its time less nft's), median and each", () => {
    expect(formatReport([row()], []).join('\n')).toMatch(/\| 13\.0 ms \[10\.0\/15\.0\/13\.0\] \|$/m);
  });

  it('marks the fastest batch size of a sweep', () => {
    const runs = [500, 1000, 2000].map((batch, i) => ({ batch, transactions: 20 / (i + 1), jsMs: 1000, kernelMs: [9000, 7000, 8000][i]!, totalMs: [10_000, 8000, 9000][i]! }));
    const text = formatReport([], [{ services: 10_000, runs }]).join('\n');
    expect(text).toContain('| 1000 (fastest) | 10 | 1.00 s | 7.00 s | 8.00 s | 1.00× |');
    expect(text).toContain('| 500 | 20 |');
    expect(text).not.toContain('Cold start (empty table)'); // a sweep-only run prints no empty tables
  });

  it('reports the median repetition of a batch size, with every repetition in brackets', () => {
    const rep = (totalMs: number) => ({ batch: 1000, transactions: 10, jsMs: 900, kernelMs: totalMs - 900, totalMs });
    const m = medianFigure([rep(16_000), rep(12_000), rep(13_000)]);
    expect(m.totalMs).toBe(13_000);
    expect(formatReport([], [{ services: 10_000, runs: [m] }]).join('\n')).toContain('| 13.00 s [16000/12000/13000] |');
  });
});
