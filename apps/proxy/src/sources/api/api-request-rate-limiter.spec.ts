import { ApiRequestRateLimiter, apiRequestRateLimiterFor } from './api-request-rate-limiter.js';

describe('ApiRequestRateLimiter', () => {
  it('lets a burst through, then spaces requests at qps', () => {
    let t = 0;
    const b = new ApiRequestRateLimiter(5, 3, () => t);
    expect([b.reserve(), b.reserve(), b.reserve()]).toEqual([0, 0, 0]);
    expect(b.reserve()).toBe(200);
    expect(b.reserve()).toBe(400);
    t += 1000; // 5 tokens refilled, 2 were owed
    expect(b.reserve()).toBe(0);
  });

  it('is unlimited for a negative qps; 0 means the client-go defaults', () => {
    const u = new ApiRequestRateLimiter(-1, 0);
    expect(u.unlimited).toBe(true);
    expect(Array.from({ length: 100 }, () => u.reserve()).every((w) => w === 0)).toBe(true);
    expect(apiRequestRateLimiterFor(0, 0).unlimited).toBe(false);
  });

  it('acquire waits for its token and can be aborted', async () => {
    const b = new ApiRequestRateLimiter(20, 1);
    await b.acquire();
    const t0 = Date.now();
    await b.acquire();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(40);
    const ac = new AbortController();
    const p = b.acquire(ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });
});
