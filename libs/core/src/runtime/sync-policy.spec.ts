import { FULL_SYNC_PERIOD_MS, SyncPolicy } from './sync-policy.js';

describe('SyncPolicy', () => {
  it('starts with a full sync, then partial ones until a failure, a request, a topology change or the hourly full sync', () => {
    const p = new SyncPolicy();
    const first = p.begin(0);
    expect(first.full).toBe(true);
    p.succeeded(first, 0);
    expect(p.begin(1000).full).toBe(false);
    p.failed();
    expect(p.begin(2000).full).toBe(true);
    p.succeeded(p.begin(2000), 2000);
    p.requestFullSync();
    expect(p.begin(3000).full).toBe(true);
    p.succeeded(p.begin(3000), 3000);
    expect(p.begin(4000, true).full).toBe(true);
    p.succeeded(p.begin(4000), 4000);
    expect(p.begin(4000 + FULL_SYNC_PERIOD_MS).full).toBe(false);
    expect(p.begin(4001 + FULL_SYNC_PERIOD_MS).full).toBe(true);
  });

  it('keeps a request made while a sync ran for the next sync', () => {
    const p = new SyncPolicy();
    const ticket = p.begin(0);
    p.requestFullSync();
    expect(p.requestedSince(ticket)).toBe(true);
    p.succeeded(ticket, 0);
    expect(p.fullSyncPending).toBe(true);
    expect(p.begin(1).full).toBe(true);
  });

  it('alwaysFull: every sync is a full one', () => {
    const p = new SyncPolicy(true);
    p.succeeded(p.begin(0), 0);
    expect(p.begin(1).full).toBe(true);
  });
});
