/**
 * Fault-injection state of the test API server. Kept apart from the request handling so the rules
 * ("what happens to the next request") are in one place.
 */
export class Faults {
  private refuseUntil = 0;
  private failRemaining = 0;
  private failStatus = 500;
  private delayMs = 0;
  private stalled = false;
  private readonly denied = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** New connections are closed immediately until `ms` from now. */
  refuseFor(ms: number): void {
    this.refuseUntil = Math.max(this.refuseUntil, this.now() + ms);
  }

  refusing(): boolean {
    return this.now() < this.refuseUntil;
  }

  /** The next `n` requests (lists, watches, gets, posts) fail with `status`. */
  failNext(n: number, status: number): void {
    this.failRemaining = n;
    this.failStatus = status;
  }

  /** Consumes one injected failure, returning its status, if any is pending. */
  takeFailure(): number | undefined {
    if (this.failRemaining <= 0) return undefined;
    this.failRemaining--;
    return this.failStatus;
  }

  /** Every response waits `ms` first (0 turns it off). */
  delay(ms: number): void {
    this.delayMs = Math.max(0, ms);
  }

  responseDelay(): number {
    return this.delayMs;
  }

  /** New watches get their headers and then silence: no events, no timeout (a half-open connection). */
  stallWatches(on: boolean): void {
    this.stalled = on;
  }

  watchesStalled(): boolean {
    return this.stalled;
  }

  /** Every request for the resource `plural` answers `status` (0 lifts it). */
  denyResource(plural: string, status: number): void {
    if (status === 0) this.denied.delete(plural);
    else this.denied.set(plural, status);
  }

  denial(plural: string): number | undefined {
    return this.denied.get(plural);
  }

  reset(): void {
    this.refuseUntil = 0;
    this.failRemaining = 0;
    this.delayMs = 0;
    this.stalled = false;
    this.denied.clear();
  }
}
