import { decadeDomain, linearScaleFromZero, logScale, niceStep } from './axis-scale.js';

describe('axis scales', () => {
  it('ticks 1-2-5 on a short log domain and maps its ends onto the pixel range', () => {
    const x = logScale(800, 54_000, 100, 700);
    expect(x.ticks).toEqual([1000, 2000, 5000, 10_000, 20_000, 50_000]);
    expect(x.at(800)).toBeCloseTo(100);
    expect(x.at(54_000)).toBeCloseTo(700);
    expect(x.at(Math.sqrt(800 * 54_000))).toBeCloseTo(400);
  });

  it('ticks only decades on a long log domain, inverted for a y axis', () => {
    const y = logScale(0.001, 1000, 400, 0);
    expect(y.ticks).toEqual([0.001, 0.01, 0.1, 1, 10, 100, 1000]);
    expect(y.at(1)).toBeCloseTo(200);
  });

  it('rounds domains to decades and linear tops to nice steps', () => {
    expect(decadeDomain(0.012, 60)).toEqual([0.01, 100]);
    expect(decadeDomain(10, 10)).toEqual([10, 100]);
    expect(niceStep(450, 6)).toBe(100);
    const y = linearScaleFromZero(430, 300, 0);
    expect(y.max).toBe(500);
    expect(y.ticks).toEqual([0, 100, 200, 300, 400, 500]);
    expect(y.at(250)).toBeCloseTo(150);
  });
});
