import { formatDuration, formatDurationNs, normalizeDuration, parseDuration, parseDurationNs } from './duration.js';

describe('Go durations', () => {
  it.each([
    ['0', 0],
    ['0s', 0],
    ['30s', 30_000],
    ['1h0m0s', 3_600_000],
    ['24h0m0s', 86_400_000],
    ['1.5m', 90_000],
    ['100ms', 100],
    ['1m30s', 90_000],
    ['-1s', -1000],
    ['+2s', 2000],
    ['.5s', 500],
    ['1.s', 1000],
    ['2h45m', 9_900_000],
    ['1µs', 0.001],
    ['1us', 0.001],
    ['1μs', 0.001],
  ])('parses %s to %d ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each([
    ['', 'time: invalid duration ""'],
    ['1', 'time: missing unit in duration "1"'],
    ['abc', 'time: invalid duration "abc"'],
    ['1x', 'time: unknown unit "x" in duration "1x"'],
    ['1s1', 'time: missing unit in duration "1s1"'],
    ['-', 'time: invalid duration "-"'],
    ['s', 'time: invalid duration "s"'],
    ['.s', 'time: invalid duration ".s"'],
  ])('rejects %j', (text, message) => {
    expect(() => parseDurationNs(text)).toThrow(message);
  });

  it.each([
    [0, '0s'],
    [30_000, '30s'],
    [60_000, '1m0s'],
    [3_600_000, '1h0m0s'],
    [86_400_000, '24h0m0s'],
    [90_000, '1m30s'],
    [1500, '1.5s'],
    [100, '100ms'],
    [1.5, '1.5ms'],
    [0.001, '1µs'],
    [-1000, '-1s'],
    [900_000, '15m0s'],
    [3_723_004, '1h2m3.004s'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('formats nanoseconds below a microsecond', () => {
    expect(formatDurationNs(999)).toBe('999ns');
  });

  it('normalises to the canonical Go form', () => {
    expect(normalizeDuration('1m')).toBe('1m0s');
    expect(normalizeDuration('24h')).toBe('24h0m0s');
    expect(normalizeDuration('90s')).toBe('1m30s');
    expect(normalizeDuration('0')).toBe('0s');
  });
});
