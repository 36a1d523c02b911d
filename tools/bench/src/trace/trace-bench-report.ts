/** The trace bench's figures, their ratios to the kernel tool and the table it prints (pure: the spec checks it). */

/** Issue 22: `trace --live` at most 2× the kernel tool's own save/list of the same state. */
export const TRACE_BOUND = 2;

export interface TraceBenchRow {
  readonly mode: string;
  readonly services: number;
  readonly endpoints: number;
  /** What the tool printed, bytes. */
  readonly listBytes: number;
  readonly listMs: number;
  /** `bin/kube-proxy trace --live -o json`, spawn → exit, the mode detected from the kernel. */
  readonly cliMs: number;
  /** The same with `--proxy-mode` given (no detection). */
  readonly cliModeMs: number;
  /** readLive + trace in process; null when the mode has no tracer in this build. */
  readonly inProcessMs: number | null;
  /** readLive's share of inProcessMs. */
  readonly inProcessReadMs: number | null;
  /** Of the read, the tools it ran. */
  readonly inProcessToolsMs: number | null;
  /** `bin/kube-proxy --once` that programmed the namespace. */
  readonly onceMs: number;
}

export interface TraceRatios {
  readonly cli: number;
  readonly inProcess: number | null;
}

export function ratios(r: TraceBenchRow): TraceRatios {
  return { cli: r.cliMs / r.listMs, inProcess: r.inProcessMs === null ? null : r.inProcessMs / r.listMs };
}

const fmtMs = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);
const fmtRatio = (x: number | null): string => (x === null ? '–' : `**${x.toFixed(2)}×** ${x <= TRACE_BOUND ? '✓' : '✗'}`);

/** The markdown table: one row per mode, the ratios judged against TRACE_BOUND. */
export function formatTraceReport(rows: readonly TraceBenchRow[], header: string): string {
  const out = [header, ''];
  out.push(`| mode | services × endpoints | kernel tool save/list | trace --live (CLI) | CLI / tool (≤ ${TRACE_BOUND}×) | CLI with --proxy-mode | tracer in process (read + trace) | in process / tool (≤ ${TRACE_BOUND}×) | state programmed by --once |`);
  out.push('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const q = ratios(r);
    const inProc =
      r.inProcessMs === null
        ? 'no tracer in this build'
        : `${fmtMs(r.inProcessMs)} (read ${fmtMs(r.inProcessReadMs ?? Number.NaN)}, of which tools ${fmtMs(r.inProcessToolsMs ?? Number.NaN)})`;
    out.push(
      `| ${r.mode} | ${r.services} × ${r.endpoints} | ${fmtMs(r.listMs)} (${(r.listBytes / 1e6).toFixed(1)} MB) | ${fmtMs(r.cliMs)} | ${fmtRatio(q.cli)} | ${fmtMs(r.cliModeMs)} (${(r.cliModeMs / r.listMs).toFixed(2)}×) | ${inProc} | ${fmtRatio(q.inProcess)} | ${fmtMs(r.onceMs)} |`,
    );
  }
  return out.join('\n') + '\n';
}
