import { Backoff } from './backoff.js';

describe('Backoff', () => {
  it('doubles from the initial delay up to the cap', () => {
    let t = 0;
    const b = new Backoff({ initialMs: 1000, maxMs: 30_000, resetAfterMs: 120_000 }, () => t);
    const delays = Array.from({ length: 8 }, () => {
      t += 10;
      return b.next();
    });
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(b.failures()).toBe(8);
  });

  it('starts over after a healthy period without failures', () => {
    let t = 0;
    const b = new Backoff({ initialMs: 100, maxMs: 1000, resetAfterMs: 5000 }, () => t);
    expect([b.next(), b.next(), b.next()]).toEqual([100, 200, 400]);
    t += 4999;
    expect(b.next()).toBe(800);
    t += 5000;
    expect(b.next()).toBe(100);
  });

  it('adds bounded jitter', () => {
    const b = new Backoff({ initialMs: 1000, maxMs: 1500, resetAfterMs: 1e9, jitter: 0.5 }, () => 0, () => 1);
    expect(b.next()).toBe(1500);
    expect(b.next()).toBe(1500);
  });
});
