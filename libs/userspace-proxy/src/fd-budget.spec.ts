import { FdBudget, proxyFdBudget, RESERVED_FDS } from './fd-budget.js';

const LIMITS = (soft: string) => `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            ${soft}                20000                files
Max locked memory         8388608              8388608              bytes
`;

describe('proxyFdBudget', () => {
  it('is the soft RLIMIT_NOFILE minus the reserve', () => {
    expect(proxyFdBudget(LIMITS('20000'))).toBe(20000 - RESERVED_FDS);
  });

  it('is unbounded when unlimited or unreadable, and never below 64', () => {
    expect(proxyFdBudget(LIMITS('unlimited'))).toBe(Number.POSITIVE_INFINITY);
    expect(proxyFdBudget('garbage')).toBe(Number.POSITIVE_INFINITY);
    expect(proxyFdBudget(LIMITS('100'))).toBe(64);
  });

  it('reads this process', () => {
    expect(proxyFdBudget()).toBeGreaterThan(0);
  });
});

describe('FdBudget', () => {
  it('grants until the limit, then refuses until released', () => {
    const b = new FdBudget(5);
    expect(b.tryAcquire(2)).toBe(true);
    expect(b.tryAcquire(2)).toBe(true);
    expect(b.tryAcquire(2)).toBe(false);
    expect(b.tryAcquire(1)).toBe(true);
    expect(b.inUse).toBe(5);
    b.release(2);
    expect(b.tryAcquire(2)).toBe(true);
  });
});
