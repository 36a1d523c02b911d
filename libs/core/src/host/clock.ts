/** An opaque timer handle returned by Clock.setTimeout. */
export type TimerHandle = unknown;

/**
 * Time as a port, so runners and health checks can be driven by a fake clock in tests.
 * `now()` is milliseconds since the epoch.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const CLOCK = Symbol.for('kube-proxy.Clock');

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // A pending timer alone must not keep the process alive (e.g. after stop()).
    t.unref?.();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
