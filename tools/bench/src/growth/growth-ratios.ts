/**
 * The arithmetic and formatting of the scale-growth benchmark (scale-growth.bench.ts), kept pure so
 * it can be tested: what one phase cost at one size, and how the cost per unit (a Service, or an
 * endpoint) changed from one size to the next. A ratio of 1.0 is linear growth; 3.0 from 10k to 30k
 * would be quadratic. Ratios of quantities too small to measure are left out ("–") rather than
 * printed as noise.
 */

/** One phase at one size, as measured: wall time, and memory after a forced GC on both sides. */
export interface PhaseSample {
  readonly phase: string;
  readonly ms: number;
  /** CPU time (user + system) of this process during the phase; a child process's (the restore) is not in it. */
  readonly cpuMs: number;
  /** CPU time of child processes that ended during the phase (the restore), from /proc/self/stat. */
  readonly childCpuMs: number;
  /** Time the main thread spent in GC pauses during the phase. */
  readonly gcMs: number;
  /** heapUsed after the phase minus before it. */
  readonly heapDelta: number;
  /** external (Buffers included) after minus before: the renderer's buffers live there, not on the heap. */
  readonly externalDelta: number;
  /** The process's RSS after the phase (after the GC). */
  readonly rss: number;
  /** Why the phase did not run, when it did not. */
  readonly skipped?: string;
}

/** One size: what it holds, in the unit its growth is judged by, and its phases in order. */
export interface ScenarioRun {
  readonly label: string;
  readonly units: number;
  readonly phases: readonly PhaseSample[];
}

/** Below these, a "per unit" figure is mostly timer or GC noise, and a ratio of it means nothing. */
export const MIN_RATIO_MS = 1;
export const MIN_RATIO_BYTES = 1024 * 1024;

/** Memory a phase left behind: heap and Buffers together (render's output is mostly Buffers). */
export const retainedBytes = (s: PhaseSample): number => s.heapDelta + s.externalDelta;

/**
 * Cost per unit at `b` divided by cost per unit at `a`; null when either side was not measured or the
 * smaller side is below `floor` (negative retained memory, i.e. a phase that freed more than it kept,
 * has no per-unit meaning either).
 */
export function perUnitRatio(a: number, unitsA: number, b: number, unitsB: number, floor: number): number | null {
  if (!(unitsA > 0 && unitsB > 0)) return null;
  if (!Number.isFinite(a) || !Number.isFinite(b) || a < floor || b < floor) return null;
  return b / unitsB / (a / unitsA);
}

export interface GrowthRow {
  readonly phase: string;
  readonly time: number | null;
  /** The same for wall time minus GC pauses: what is left when the collector's share is taken out. */
  readonly timeLessGc: number | null;
  readonly memory: number | null;
}

/** Per phase (matched by name), the per-unit time and retained-memory ratios from `from` to `to`. */
export function growth(from: ScenarioRun, to: ScenarioRun): GrowthRow[] {
  return to.phases.map((t) => {
    const f = from.phases.find((p) => p.phase === t.phase);
    if (f === undefined || f.skipped !== undefined || t.skipped !== undefined) return { phase: t.phase, time: null, timeLessGc: null, memory: null };
    return {
      phase: t.phase,
      time: perUnitRatio(f.ms, from.units, t.ms, to.units, MIN_RATIO_MS),
      timeLessGc: perUnitRatio(f.ms - f.gcMs, from.units, t.ms - t.gcMs, to.units, MIN_RATIO_MS),
      memory: perUnitRatio(retainedBytes(f), from.units, retainedBytes(t), to.units, MIN_RATIO_BYTES),
    };
  });
}

/**
 * Several runs of one size as one: per phase, the run whose wall time is the median (the sample is
 * kept whole, so its memory and GC figures belong to the same run as its time). Runs must list the
 * same phases in the same order.
 */
export function medianByPhase(runs: readonly (readonly PhaseSample[])[]): PhaseSample[] {
  const first = runs[0];
  if (first === undefined) return [];
  return first.map((p, i) => {
    const samples = runs.map((r) => r[i]);
    if (samples.some((x) => x === undefined || x.phase !== p.phase)) throw new Error(`runs disagree on phase ${i} (${p.phase})`);
    const measured = (samples as PhaseSample[]).filter((x) => x.skipped === undefined).sort((a, b) => a.ms - b.ms);
    return measured[Math.floor((measured.length - 1) / 2)] ?? p;
  });
}

export const formatRatio = (r: number | null): string => (r === null ? '–' : `${r.toFixed(2)}×`);

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}

/** Bytes as MiB with a sign (deltas can be negative: a phase may free what an earlier one kept). */
export function formatMiB(bytes: number, signed = true): string {
  const mib = bytes / (1024 * 1024);
  const sign = signed && mib >= 0.05 ? '+' : '';
  return `${sign}${mib.toFixed(1)} MiB`;
}

/** A per-unit cost: µs for time, bytes for memory (the scale a reader compares across sizes). */
export function formatPerUnit(value: number, units: number, kind: 'ms' | 'bytes'): string {
  if (!(units > 0)) return '–';
  const v = value / units;
  return kind === 'ms' ? `${(v * 1000).toFixed(1)} µs` : `${Math.round(v)} B`;
}
