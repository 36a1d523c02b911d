/**
 * Axis scales of the perf charts: logarithmic for service counts (1k…45k spans 1.7 decades) and for
 * times (milliseconds of compute beside minutes of cold start), linear from zero for memory.
 */

export interface AxisScale {
  /** Data value → pixel. */
  readonly at: (v: number) => number;
  readonly ticks: readonly number[];
  readonly min: number;
  readonly max: number;
}

/** 1, 2, 5 × 10^k inside [min, max]. */
function logTicks(min: number, max: number, steps: readonly number[]): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
    for (const m of steps) {
      const v = Number((m * 10 ** e).toPrecision(12));
      if (v >= min * (1 - 1e-9) && v <= max * (1 + 1e-9)) out.push(v);
    }
  }
  return out;
}

/**
 * A log scale over [min, max] mapped onto [from, to] pixels (to < from for a y axis). Decades are
 * ticked; when the domain spans less than two decades, 2 and 5 are ticked too.
 */
export function logScale(min: number, max: number, from: number, to: number): AxisScale {
  const lo = Math.log10(min);
  const span = Math.log10(max) - lo || 1;
  const steps = Math.log10(max / min) < 2.5 ? [1, 2, 5] : [1];
  return { min, max, ticks: logTicks(min, max, steps), at: (v) => from + ((Math.log10(v) - lo) / span) * (to - from) };
}

/** The smallest 1, 2 or 5 × 10^k step that cuts [0, max] into at most `count` intervals. */
export function niceStep(max: number, count: number): number {
  const raw = max / count;
  const e = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * e >= raw) return Number((m * e).toPrecision(12));
  return 10 * e;
}

/** A linear scale from 0 to a nice bound above `max`, ticked every nice step. */
export function linearScaleFromZero(max: number, from: number, to: number, count = 6): AxisScale {
  const step = niceStep(max > 0 ? max : 1, count);
  const top = Math.max(step, Math.ceil((max * 1.05) / step) * step);
  const ticks: number[] = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return { min: 0, max: top, ticks, at: (v) => from + (v / top) * (to - from) };
}

/** Whole decades around [min, max] (positive values), so a log axis starts and ends on a labelled tick. */
export function decadeDomain(min: number, max: number): [number, number] {
  const lo = 10 ** Math.floor(Math.log10(min));
  const hi = 10 ** Math.ceil(Math.log10(max));
  return hi > lo ? [lo, hi] : [lo, lo * 10];
}
