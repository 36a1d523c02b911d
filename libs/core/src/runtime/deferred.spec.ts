import { deferred } from './deferred.js';

describe('deferred', () => {
  it('resolves once and says so', async () => {
    const d = deferred();
    expect(d.settled).toBe(false);
    d.resolve();
    expect(d.settled).toBe(true);
    await expect(d.promise).resolves.toBeUndefined();
  });

  it('rejects without an unhandled rejection when nobody waits, and still rejects for a late waiter', async () => {
    const d = deferred();
    d.reject(new Error('stopped before the first sync'));
    await new Promise((r) => setImmediate(r));
    expect(d.settled).toBe(true);
    await expect(d.promise).rejects.toThrow('stopped before the first sync');
  });
});
