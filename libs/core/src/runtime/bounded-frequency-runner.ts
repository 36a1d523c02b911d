import type { Clock, TimerHandle } from '../host/clock.js';
import { nullLogger, type Logger } from '../host/logger.js';
import { SyncRateLimiter } from './sync-rate-limiter.js';

export interface BoundedFrequencyRunnerOptions {
  /** For logs. */
  readonly name: string;
  /** The work. Runs never overlap: the next one starts only after this settles. A rejection is logged. */
  readonly fn: () => Promise<void> | void;
  /** Least time between the end of one run and the start of the next, except for bursts. 0 = no limit. */
  readonly minIntervalMs: number;
  /** Most time between runs: a run happens at least this often even if nobody asks. */
  readonly maxIntervalMs: number;
  /** Runs allowed back to back; one more is earned per minInterval, up to this many. */
  readonly burstRuns: number;
  readonly clock: Clock;
  readonly logger?: Logger;
}

/**
 * Upstream's async.BoundedFrequencyRunner (pkg/util/async), for an async function and an injectable
 * clock. The proxiers' sync loop: `run()` asks for a run as soon as the rate limit allows (requests
 * arriving while one is waiting or running coalesce into one), `retryAfter()` makes sure a run happens
 * within a delay (unless one happens sooner anyway), and a run happens at least every maxInterval.
 *
 * A single timer drives everything. After a run it is set to maxInterval; a deferred request pulls it
 * in to when the limiter will allow the next run; a retry pulls it in to the retry time.
 */
export class BoundedFrequencyRunner {
  private readonly name: string;
  private readonly fn: () => Promise<void> | void;
  private readonly minIntervalMs: number;
  private readonly maxIntervalMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly limiter: { tryAccept(): boolean };

  private state: 'new' | 'looping' | 'stopped' = 'new';
  private running = false;
  private runRequested = false;
  private retryAt: number | undefined;
  private drainQueued = false;
  private lastRun = Number.NEGATIVE_INFINITY;
  private timer: TimerHandle | undefined;
  private timerDue: number | undefined;
  private readonly done: Promise<void>;
  private resolveDone!: () => void;

  constructor(options: BoundedFrequencyRunnerOptions) {
    const { name, minIntervalMs, maxIntervalMs, burstRuns } = options;
    if (!(maxIntervalMs >= minIntervalMs)) {
      throw new Error(`${name}: maxInterval (${maxIntervalMs}ms) must be >= minInterval (${minIntervalMs}ms)`);
    }
    if (minIntervalMs < 0) throw new Error(`${name}: minInterval must not be negative`);
    this.name = name;
    this.fn = options.fn;
    this.minIntervalMs = minIntervalMs;
    this.maxIntervalMs = maxIntervalMs;
    this.clock = options.clock;
    this.logger = options.logger ?? nullLogger;
    this.limiter = minIntervalMs === 0 ? { tryAccept: () => true } : new SyncRateLimiter(burstRuns, minIntervalMs, this.clock);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  /**
   * Starts handling requests and the periodic timer. Resolves once stop() was called and any run in
   * progress has finished. Requests made before loop() are kept and handled when it starts.
   */
  loop(): Promise<void> {
    if (this.state === 'looping') throw new Error(`${this.name}: loop() is already running`);
    if (this.state === 'stopped') return this.done;
    this.state = 'looping';
    this.logger.verbose(`${this.name} Loop running`);
    this.resetTimer(this.maxIntervalMs);
    this.queueDrain();
    return this.done;
  }

  /** Asks for a run as soon as allowed. Never runs fn synchronously. */
  run(): void {
    if (this.state === 'stopped') return;
    this.runRequested = true;
    this.queueDrain();
  }

  /** Makes sure fn runs again no later than `ms` from now (sooner runs make this moot). */
  retryAfter(ms: number): void {
    if (this.state === 'stopped') return;
    const at = this.clock.now() + ms;
    // Keep the earliest retry asked for.
    if (this.retryAt !== undefined && this.retryAt < at) return;
    this.retryAt = at;
    this.queueDrain();
  }

  /** Stops the loop; loop() resolves when a run in progress (if any) has finished. */
  stop(): void {
    if (this.state === 'stopped') return;
    const wasLooping = this.state === 'looping';
    this.state = 'stopped';
    this.clearTimer();
    if (wasLooping) this.logger.verbose(`${this.name} Loop stopping`);
    if (!this.running) this.resolveDone();
  }

  /** Handle pending requests on a later microtask, so callers never run fn re-entrantly. */
  private queueDrain(): void {
    if (this.state !== 'looping' || this.running || this.drainQueued) return;
    this.drainQueued = true;
    queueMicrotask(() => {
      this.drainQueued = false;
      this.drain();
    });
  }

  private drain(): void {
    if (this.state !== 'looping' || this.running) return;
    if (this.retryAt !== undefined) this.doRetry(this.retryAt);
    if (this.runRequested) {
      this.runRequested = false;
      void this.tryRun();
    }
  }

  private doRetry(retryAt: number): void {
    const interval = retryAt - this.clock.now();
    this.retryAt = undefined;
    if (interval < this.remaining()) {
      this.logger.verbose(`${this.name}: retrying in ${interval}ms`);
      this.resetTimer(interval);
    }
  }

  private async tryRun(): Promise<void> {
    if (!this.limiter.tryAccept()) {
      // Not allowed yet: wake up when it will be, unless the timer is due sooner anyway.
      const elapsed = this.clock.now() - this.lastRun;
      const nextPossible = this.minIntervalMs - elapsed;
      const nextScheduled = this.remaining();
      this.logger.debug(`${this.name}: ${elapsed}ms since last run, possible in ${nextPossible}ms, scheduled in ${nextScheduled}ms`);
      this.resetTimer(Math.min(nextPossible, nextScheduled));
      return;
    }
    this.running = true;
    // No timer while running: the run ends by setting it to maxInterval.
    this.clearTimer();
    try {
      await this.fn();
    } catch (err) {
      this.logger.error(`${this.name}: run failed`, { err: err instanceof Error ? err.message : String(err) });
    }
    this.lastRun = this.clock.now();
    this.running = false;
    if (this.state === 'stopped') {
      this.resolveDone();
      return;
    }
    this.resetTimer(this.maxIntervalMs);
    this.logger.verbose(`${this.name}: ran, next possible in ${this.minIntervalMs}ms, periodic in ${this.maxIntervalMs}ms`);
    // Requests that arrived during the run (including a retryAfter from fn itself).
    this.drain();
  }

  private remaining(): number {
    return this.timerDue === undefined ? Number.POSITIVE_INFINITY : this.timerDue - this.clock.now();
  }

  private resetTimer(ms: number): void {
    this.clearTimer();
    this.timerDue = this.clock.now() + ms;
    this.timer = this.clock.setTimeout(() => this.onTimer(), Math.max(0, ms));
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = undefined;
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerDue = undefined;
    if (this.state !== 'looping' || this.running) return;
    void this.tryRun();
  }
}
