/**
 * Client-side request rate limit (clientConnection.qps/burst), as client-go's token bucket: `burst`
 * requests may go at once, then `qps` per second. Callers reserve a token and wait for it, so waiting
 * requests go out in arrival order.
 */
export class ApiRequestRateLimiter {
  private tokens: number;
  private last: number;

  /** qps <= 0 disables the limit (client-go: a negative QPS means no rate limiter). */
  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = Math.max(1, burst);
    this.last = now();
  }

  get unlimited(): boolean {
    return !(this.qps > 0);
  }

  /** How long the next request must wait (ms); reserves its token. */
  reserve(): number {
    if (this.unlimited) return 0;
    const t = this.now();
    this.tokens = Math.min(Math.max(1, this.burst), this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  /** Resolves when the request may go; rejects if `signal` aborts first. */
  async acquire(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait <= 0) return;
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason ?? new Error('aborted'));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, wait);
      timer.unref();
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** client-go's defaults when QPS/Burst are 0: 5 requests/s, bursts of 10. */
export function apiRequestRateLimiterFor(qps: number, burst: number): ApiRequestRateLimiter {
  return new ApiRequestRateLimiter(qps === 0 ? 5 : qps, burst === 0 ? 10 : burst);
}
