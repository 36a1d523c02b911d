/**
 * Times one phase of the scale-growth benchmark and reads what it left in memory. A full GC runs
 * right before and right after (node --expose-gc), so the heap delta is what the phase retains,
 * not the garbage it happened to leave; the GCs themselves are outside the timed part.
 */
import { readFileSync } from 'node:fs';
import { PerformanceObserver, performance, type PerformanceEntry } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import type { PhaseSample } from './growth-ratios.js';

// Forced GCs age compiled bytecode, and V8 flushes what a phase did not run lately: code from earlier
// phases would then leave the heap during a later one and show up as a negative delta there.
setFlagsFromString('--no-flush-bytecode');

function forcedGc(): () => void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') throw new Error('the scale-growth benchmark needs node --expose-gc (memory is read after a forced GC)');
  // Twice: objects whose last reference was a weak or finalizable one go only on the second pass.
  return () => {
    gc();
    gc();
  };
}

/** GC pauses as V8 reports them; entries arrive a tick after the pause, so they are read after one. */
const gcPauses: PerformanceEntry[] = [];
new PerformanceObserver((list) => void gcPauses.push(...list.getEntries())).observe({ entryTypes: ['gc'] });

async function gcPauseMs(from: number, to: number): Promise<number> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
  let ms = 0;
  for (const e of gcPauses) if (e.startTime >= from && e.startTime <= to) ms += e.duration;
  gcPauses.length = 0;
  return ms;
}

/**
 * User + system time of this process's waited-for children (cutime + cstime in /proc/self/stat), in
 * ms: Node has no getrusage(RUSAGE_CHILDREN). 0 where /proc is not there.
 */
function childCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; cutime and cstime are 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** USER_HZ: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

export interface Measured<T> {
  readonly value: T;
  readonly sample: PhaseSample;
}

export async function measurePhase<T>(phase: string, run: () => T | Promise<T>): Promise<Measured<T>> {
  const gc = forcedGc();
  gc();
  const before = process.memoryUsage();
  const cpuBefore = process.cpuUsage();
  const childBefore = childCpuMs();
  const from = performance.now();
  const value = await run();
  const to = performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  const childMs = childCpuMs() - childBefore;
  const gcMs = await gcPauseMs(from, to);
  gc();
  const after = process.memoryUsage();
  return {
    value,
    sample: {
      phase,
      ms: to - from,
      cpuMs: (cpu.user + cpu.system) / 1000,
      childCpuMs: childMs,
      gcMs,
      heapDelta: after.heapUsed - before.heapUsed,
      externalDelta: after.external - before.external,
      rss: after.rss,
    },
  };
}

/** A phase that could not run: no time, no memory, and the reason. */
export function skippedPhase(phase: string, reason: string): PhaseSample {
  forcedGc()();
  return { phase, ms: Number.NaN, cpuMs: Number.NaN, childCpuMs: Number.NaN, gcMs: Number.NaN, heapDelta: 0, externalDelta: 0, rss: process.memoryUsage().rss, skipped: reason };
}

/** Drops garbage between scenarios so one size's leftovers are not charged to the next. */
export function collect(): void {
  forcedGc()();
}
