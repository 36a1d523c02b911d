/**
 * Test helpers for code driven by a FakeClock whose work is asynchronous (a proxier's sync awaits
 * executor calls): time is moved in steps and pending promise chains run between them, so a timer
 * that starts async work sees it finish before the next step. Shared by every backend's proxier specs.
 */
import type { FakeClock } from './fake-clock.js';

/** Lets every pending promise chain run (independent of the fake clock). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Moves `clock` forward by `ms` in steps of `step`, settling after each. */
export async function advanceSettling(clock: FakeClock, ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(Math.min(step, ms - t));
    await settle();
  }
}
