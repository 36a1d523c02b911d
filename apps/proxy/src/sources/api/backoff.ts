export interface BackoffOptions {
  /** First delay after a failure. */
  readonly initialMs: number;
  /** Delays never exceed this. */
  readonly maxMs: number;
  /** Growth per consecutive failure. Default 2. */
  readonly factor?: number;
  /**
   * A failure this long after the previous one starts again from `initialMs`: the connection was
   * healthy in between, so this is a new incident, not the next step of the old one.
   */
  readonly resetAfterMs: number;
  /** Adds up to this fraction of the delay at random, so many proxies do not reconnect in lockstep. Default 0. */
  readonly jitter?: number;
}

/** The default reconnect policy of the informers: 1 s doubling to 30 s, reset after 2 min without failures. */
export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 30_000, factor: 2, resetAfterMs: 120_000, jitter: 0.1 };

/** Capped exponential backoff, as client-go's reflector uses between list/watch attempts. */
export class Backoff {
  private attempt = 0;
  private lastFailureAt: number | undefined;

  constructor(
    private readonly opts: BackoffOptions,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    const t = this.now();
    if (this.lastFailureAt !== undefined && t - this.lastFailureAt >= this.opts.resetAfterMs) this.attempt = 0;
    this.lastFailureAt = t;
    const base = Math.min(this.opts.maxMs, this.opts.initialMs * (this.opts.factor ?? 2) ** this.attempt);
    this.attempt++;
    const jitter = (this.opts.jitter ?? 0) * base * this.random();
    return Math.round(Math.min(this.opts.maxMs, base + jitter));
  }

  /** Consecutive failures counted so far. */
  failures(): number {
    return this.attempt;
  }
}
