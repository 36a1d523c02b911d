import type { Clock } from '../host/clock.js';

/**
 * The rate limiter upstream's BoundedFrequencyRunner gets from client-go (golang.org/x/time/rate):
 * `burst` tokens, refilled continuously at one per `intervalMs`, starting full. Credit is kept in
 * milliseconds (one token = intervalMs of credit) so integer-millisecond timings stay exact.
 */
export class SyncRateLimiter {
  private credit: number;
  private last: number;

  constructor(
    private readonly burst: number,
    private readonly intervalMs: number,
    private readonly clock: Clock,
  ) {
    if (!Number.isInteger(burst) || burst < 1) throw new Error(`burst must be a positive integer, got ${burst}`);
    this.credit = burst * intervalMs;
    this.last = clock.now();
  }

  /** Takes a token if one is available now. */
  tryAccept(): boolean {
    const now = this.clock.now();
    this.credit = Math.min(this.burst * this.intervalMs, this.credit + Math.max(0, now - this.last));
    this.last = now;
    if (this.credit < this.intervalMs) return false;
    this.credit -= this.intervalMs;
    return true;
  }
}
