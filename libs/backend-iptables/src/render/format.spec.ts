import { computeProbability, formatMasqueradeMark, isIPv4Loopback, probability } from './format.js';

describe('computeProbability (upstream TestComputeProbability)', () => {
  it.each([
    [1, '1.0000000000'],
    [2, '0.5000000000'],
    [10, '0.1000000000'],
    [100, '0.0100000000'],
    [1000, '0.0010000000'],
    [10000, '0.0001000000'],
    [100000, '0.0000100000'],
    [100001, '0.0000099999'],
  ])('1/%d is %s', (n, expected) => {
    expect(computeProbability(n)).toBe(expected);
  });

  it('is strictly increasing as n decreases', () => {
    let prev = 0;
    let bad: number | null = null;
    for (let i = 100000; i > 1 && bad === null; i--) {
      const cur = Number(computeProbability(i));
      if (!(cur > prev)) bad = i;
      prev = cur;
    }
    expect(bad).toBeNull();
  });

  it('rounds the one exact tie (1/2048) half to even, as Go does', () => {
    // 1/2048 = 0.00048828125 exactly: Go's %0.10f gives ...812, toFixed would give ...813.
    expect(computeProbability(2048)).toBe('0.0004882812');
    expect(computeProbability(3)).toBe('0.3333333333');
    expect(computeProbability(6)).toBe('0.1666666667');
  });

  it('caches', () => {
    expect(probability(5)).toBe('0.2000000000');
    expect(probability(2)).toBe('0.5000000000');
  });
});

describe('formatMasqueradeMark', () => {
  it("formats like Go's %#08x", () => {
    expect(formatMasqueradeMark(14)).toBe('0x00004000');
    expect(formatMasqueradeMark(0)).toBe('0x00000001');
    expect(formatMasqueradeMark(31)).toBe('0x80000000');
  });
  it('rejects bad bits', () => {
    expect(() => formatMasqueradeMark(32)).toThrow(RangeError);
    expect(() => formatMasqueradeMark(-1)).toThrow(RangeError);
  });
});

// Parsing, containment and the loopback rule are @kube-proxy/core's (model/ip.spec.ts); only the
// IPv4-only restriction is this file's.
describe('isIPv4Loopback', () => {
  it('is an IPv4 (To4() != nil) loopback address', () => {
    expect(isIPv4Loopback('127.0.0.1')).toBe(true);
    expect(isIPv4Loopback('::ffff:127.0.0.1')).toBe(true);
    expect(isIPv4Loopback('::1')).toBe(false);
    expect(isIPv4Loopback('10.0.0.1')).toBe(false);
  });
});
