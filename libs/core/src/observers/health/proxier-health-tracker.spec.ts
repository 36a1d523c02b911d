import { FakeClock } from '../../testing/fake-clock.js';
import { ProxierHealthTracker } from './proxier-health-tracker.js';

// Scenarios after upstream's healthcheck_test.go (TestHealthzServer / dual-stack variants), driven
// by a fake clock: timeout = 2 × syncPeriod = 60 s.
const TIMEOUT = 60_000;

function tracker(): { clock: FakeClock; hs: ProxierHealthTracker } {
  const clock = new FakeClock();
  return { clock, hs: new ProxierHealthTracker(clock, TIMEOUT) };
}

describe('ProxierHealthTracker', () => {
  it('is healthy at startup, before any family reported', () => {
    const { hs, clock } = tracker();
    expect(hs.isHealthy()).toBe(true);
    expect(hs.health()).toEqual({ lastUpdated: undefined, currentTime: clock.now(), healthy: true, status: {} });
  });

  it('ignores queued changes of a family whose loop has not started (never updated)', () => {
    const { hs, clock } = tracker();
    hs.queuedUpdate('IPv4');
    clock.advance(10 * TIMEOUT);
    expect(hs.isHealthy()).toBe(true);
  });

  it('turns unhealthy when a queued change is not programmed within the timeout, healthy again after updated()', () => {
    const { hs, clock } = tracker();
    hs.updated('IPv4');
    const start = clock.now();

    clock.advance(25_000);
    hs.queuedUpdate('IPv4');
    clock.advance(TIMEOUT - 1);
    expect(hs.isHealthy()).toBe(true); // strictly less than the timeout is still fine
    clock.advance(1);
    const h = hs.health();
    expect(h.healthy).toBe(false); // exactly the timeout is late
    expect(h.status.IPv4).toEqual({ lastUpdated: start, healthy: false });
    expect(h.lastUpdated).toBe(start);

    hs.updated('IPv4');
    expect(hs.isHealthy()).toBe(true);
    expect(hs.health().lastUpdated).toBe(clock.now());
  });

  it('measures from the oldest pending change, not the latest', () => {
    const { hs, clock } = tracker();
    hs.updated('IPv4');
    hs.queuedUpdate('IPv4');
    clock.advance(TIMEOUT / 2);
    hs.queuedUpdate('IPv4');
    clock.advance(TIMEOUT / 2);
    expect(hs.isHealthy()).toBe(false);
  });

  it('stays healthy with no pending change however old the last update is', () => {
    const { hs, clock } = tracker();
    hs.updated('IPv4');
    clock.advance(100 * TIMEOUT);
    expect(hs.isHealthy()).toBe(true);
  });

  it('is unhealthy when either family is late (dual-stack), reporting each family', () => {
    const { hs, clock } = tracker();
    hs.updated('IPv4');
    hs.updated('IPv6');
    hs.queuedUpdate('IPv4');
    hs.queuedUpdate('IPv6');
    clock.advance(TIMEOUT / 2);
    hs.updated('IPv4');
    clock.advance(TIMEOUT / 2);
    const h = hs.health();
    expect(h.healthy).toBe(false);
    expect(h.status.IPv4?.healthy).toBe(true);
    expect(h.status.IPv6?.healthy).toBe(false);
    expect(h.lastUpdated).toBe(h.status.IPv4?.lastUpdated);
    hs.updated('IPv6');
    expect(hs.isHealthy()).toBe(true);
  });

  it('keeps Node eligibility separate from proxier health', () => {
    const { hs } = tracker();
    expect(hs.nodeEligible()).toBe(true);
    hs.syncNodeEligible(false);
    expect(hs.nodeEligible()).toBe(false);
    expect(hs.isHealthy()).toBe(true);
    hs.syncNodeEligible(true);
    expect(hs.nodeEligible()).toBe(true);
  });
});
