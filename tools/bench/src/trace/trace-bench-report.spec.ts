import { formatTraceReport, ratios, TRACE_BOUND, type TraceBenchRow } from './trace-bench-report.js';

const row = (over: Partial<TraceBenchRow> = {}): TraceBenchRow => ({
  mode: 'nftables',
  services: 10_000,
  endpoints: 5,
  listBytes: 12_500_000,
  listMs: 400,
  cliMs: 1000,
  cliModeMs: 800,
  inProcessMs: 600,
  inProcessReadMs: 550,
  inProcessToolsMs: 420,
  onceMs: 14_000,
  ...over,
});

describe('trace bench report', () => {
  it('divides each trace time by the kernel tool time', () => {
    expect(ratios(row())).toEqual({ cli: 2.5, inProcess: 1.5 });
    expect(ratios(row({ inProcessMs: null }))).toEqual({ cli: 2.5, inProcess: null });
  });

  it('judges each ratio against the issue bound of 2×', () => {
    expect(TRACE_BOUND).toBe(2);
    const text = formatTraceReport([row()], 'h');
    expect(text).toContain('**2.50×** ✗');
    expect(text).toContain('**1.50×** ✓');
    expect(text).toContain('| nftables | 10000 × 5 | 400 ms (12.5 MB) | 1.00 s |');
    expect(text).toContain('| 800 ms (2.00×) |');
    expect(text).toContain('600 ms (read 550 ms, of which tools 420 ms)');
  });

  it('says when a mode has no tracer instead of inventing a figure', () => {
    const text = formatTraceReport([row({ inProcessMs: null, inProcessReadMs: null, inProcessToolsMs: null })], 'h');
    expect(text).toContain('no tracer in this build');
    expect(text).toContain('| – |');
  });
});
