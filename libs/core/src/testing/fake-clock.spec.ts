import { FakeClock } from './fake-clock.js';

describe('FakeClock', () => {
  it('fires due timers in order, each at its own time, including ones scheduled while advancing', () => {
    const clock = new FakeClock(0);
    const seen: string[] = [];
    clock.setTimeout(() => seen.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => {
      seen.push(`a@${clock.now()}`);
      clock.setTimeout(() => seen.push(`c@${clock.now()}`), 5);
    }, 10);
    clock.setTimeout(() => seen.push(`late@${clock.now()}`), 100);
    clock.advance(50);
    expect(seen).toEqual(['a@10', 'c@15', 'b@20']);
    expect(clock.now()).toBe(50);
    expect(clock.nextTimerDelay()).toBe(50);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('clearTimeout cancels; zero and negative delays fire on the next advance', () => {
    const clock = new FakeClock();
    const seen: number[] = [];
    const h = clock.setTimeout(() => seen.push(1), 10);
    clock.setTimeout(() => seen.push(2), -5);
    clock.clearTimeout(h);
    expect(clock.nextTimerDelay()).toBe(0);
    clock.advance(0);
    clock.advance(100);
    expect(seen).toEqual([2]);
    expect(clock.nextTimerDelay()).toBeUndefined();
    expect(() => clock.advance(-1)).toThrow();
  });
});
