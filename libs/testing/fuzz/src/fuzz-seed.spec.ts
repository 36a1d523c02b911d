import { DEFAULT_FUZZ_SEED, fuzzRuns, fuzzSeed, replayHint } from './fuzz-seed.js';

describe('fuzz seed and run count', () => {
  it('uses the fixed default seed unless FUZZ_SEED is set', () => {
    expect(fuzzSeed({})).toBe(DEFAULT_FUZZ_SEED);
    expect(fuzzSeed({ FUZZ_SEED: '' })).toBe(DEFAULT_FUZZ_SEED);
    expect(fuzzSeed({ FUZZ_SEED: '42' })).toBe(42);
    expect(fuzzSeed({ FUZZ_SEED: '-7' })).toBe(-7);
  });

  it('refuses a FUZZ_SEED that is not an integer instead of silently using another seed', () => {
    expect(() => fuzzSeed({ FUZZ_SEED: 'abc' })).toThrow(/FUZZ_SEED must be an integer/);
    expect(() => fuzzSeed({ FUZZ_SEED: '1.5' })).toThrow(/FUZZ_SEED/);
  });

  it('scales the run count with FUZZ_RUNS and says how to replay a seed', () => {
    expect(fuzzRuns(50, {})).toBe(50);
    expect(fuzzRuns(50, { FUZZ_RUNS: '500' })).toBe(500);
    expect(() => fuzzRuns(50, { FUZZ_RUNS: '0' })).toThrow(/FUZZ_RUNS/);
    expect(replayHint(9)).toBe('fuzz seed 9 (replay with FUZZ_SEED=9)');
  });
});
