import { formatMiB, formatPerUnit, formatRatio, growth, medianByPhase, perUnitRatio, type PhaseSample, type ScenarioRun } from './growth-ratios.js';

const MiB = 1024 * 1024;

function sample(phase: string, ms: number, heapMiB: number, externalMiB = 0, skipped?: string, gcMs = 0): PhaseSample {
  return { phase, ms, cpuMs: ms, childCpuMs: 0, gcMs, heapDelta: heapMiB * MiB, externalDelta: externalMiB * MiB, rss: 100 * MiB, ...(skipped ? { skipped } : {}) };
}

const run = (units: number, phases: PhaseSample[]): ScenarioRun => ({ label: `${units}`, units, phases });

describe('scale-growth ratios', () => {
  it('is 1.0 when the cost per unit stays the same, and 3.0 when it triples (quadratic from 10k to 30k)', () => {
    expect(perUnitRatio(100, 1000, 1000, 10_000, 1)).toBeCloseTo(1);
    expect(perUnitRatio(1000, 10_000, 9000, 30_000, 1)).toBeCloseTo(3);
  });

  it('gives no ratio for a side below the floor, a negative amount, or no units', () => {
    expect(perUnitRatio(0.4, 1000, 10, 10_000, 1)).toBeNull();
    expect(perUnitRatio(-5 * MiB, 1000, 10 * MiB, 10_000, MiB)).toBeNull();
    expect(perUnitRatio(10, 0, 10, 10, 1)).toBeNull();
    expect(perUnitRatio(Number.NaN, 10, 10, 10, 1)).toBeNull();
  });

  it('compares phases by name, judging memory by heap plus external (Buffers)', () => {
    const from = run(1000, [sample('decode', 20, 2), sample('render', 100, 2, 8)]);
    const to = run(10_000, [sample('decode', 400, 20), sample('render', 1000, 20, 80)]);
    expect(growth(from, to)).toEqual([
      { phase: 'decode', time: 2, timeLessGc: 2, memory: 1 },
      { phase: 'render', time: 1, timeLessGc: 1, memory: 1 },
    ]);
  });

  it('takes GC pauses out of the time for the time-less-GC ratio', () => {
    // 10× the Services, 30× the wall time, but 200 ms of the 300 are GC: the rest grew linearly.
    const from = run(1000, [sample('handlers', 10, 3)]);
    const to = run(10_000, [sample('handlers', 300, 30, 0, undefined, 200)]);
    const [row] = growth(from, to);
    expect(row?.time).toBeCloseTo(3);
    expect(row?.timeLessGc).toBeCloseTo(1);
  });

  it('leaves skipped phases and phases missing at the smaller size without ratios', () => {
    const from = run(1000, [sample('apply', Number.NaN, 0, 0, 'not root')]);
    const to = run(10_000, [sample('apply', 500, 1), sample('trackers', 50, 4)]);
    expect(growth(from, to)).toEqual([
      { phase: 'apply', time: null, timeLessGc: null, memory: null },
      { phase: 'trackers', time: null, timeLessGc: null, memory: null },
    ]);
  });

  it('combines runs per phase by the run with the median wall time, keeping that run\'s memory', () => {
    const runs = [
      [sample('decode', 30, 3), sample('apply', Number.NaN, 0, 0, 'not root')],
      [sample('decode', 10, 1), sample('apply', Number.NaN, 0, 0, 'not root')],
      [sample('decode', 20, 2), sample('apply', Number.NaN, 0, 0, 'not root')],
    ];
    const [decode, apply] = medianByPhase(runs);
    expect(decode).toMatchObject({ ms: 20, heapDelta: 2 * MiB });
    expect(apply?.skipped).toBe('not root');
    expect(() => medianByPhase([[sample('decode', 1, 1)], [sample('render', 1, 1)]])).toThrow(/disagree/);
  });

  it('formats ratios, signed MiB deltas and per-unit costs', () => {
    expect(formatRatio(1.234)).toBe('1.23×');
    expect(formatRatio(null)).toBe('–');
    expect(formatMiB(2.5 * MiB)).toBe('+2.5 MiB');
    expect(formatMiB(-1.5 * MiB)).toBe('-1.5 MiB');
    expect(formatMiB(3 * MiB, false)).toBe('3.0 MiB');
    expect(formatPerUnit(25, 1000, 'ms')).toBe('25.0 µs');
    expect(formatPerUnit(2 * MiB, 1024, 'bytes')).toBe('2048 B');
  });
});
