import type { Clock, TimerHandle } from '../host/clock.js';

interface FakeTimer {
  readonly id: number;
  readonly due: number;
  readonly fn: () => void;
}

/**
 * A Clock for tests: time stands still until advance() moves it, firing due timers in order, each
 * with now() equal to its due time. Timers scheduled while advancing fire in the same call if they
 * fall due within it. Nothing here touches real time.
 */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private timers: FakeTimer[] = [];

  /** Starts at 2000-01-01T00:00:00Z by default (a fixed, recognisable instant). */
  constructor(startMs: number = Date.UTC(2000, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = { id: this.nextId++, due: this.current + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way. */
  advance(ms: number): void {
    if (ms < 0) throw new Error('FakeClock cannot go backwards');
    const target = this.current + ms;
    for (;;) {
      const next = this.earliest();
      if (!next || next.due > target) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = next.due;
      next.fn();
    }
    this.current = target;
  }

  /** Number of timers waiting to fire. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** Milliseconds until the earliest pending timer fires, or undefined when none is pending. */
  nextTimerDelay(): number | undefined {
    const next = this.earliest();
    return next ? next.due - this.current : undefined;
  }

  private earliest(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) if (!best || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    return best;
  }
}
