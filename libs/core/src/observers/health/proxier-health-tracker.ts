import type { IPFamily } from '../../semantics/model/protocol.js';
import type { Clock } from '../../host/clock.js';
import type { ProxierHealthUpdater } from './proxier-health-updater.js';
import type { ProxierHealth, ProxyHealth, ProxyHealthChecker } from './proxy-health.js';

/**
 * The proxier health state on the Clock port, with upstream's semantics (proxier_health.go):
 * - only families that have called updated() at least once are judged, so a queued change before a
 *   family's sync loop has started never makes the proxy unhealthy;
 * - a family is unhealthy once its oldest unprogrammed change is `healthTimeoutMs` old or older
 *   (strictly less is still healthy), and healthy again as soon as it calls updated();
 * - the Node is eligible until told otherwise, so a proxy that never sees its Node still serves.
 */
export class ProxierHealthTracker implements ProxierHealthUpdater, ProxyHealthChecker {
  private readonly lastUpdated = new Map<IPFamily, number>();
  private readonly oldestPendingQueued = new Map<IPFamily, number>();
  private eligible = true;

  constructor(
    private readonly clock: Clock,
    readonly healthTimeoutMs: number,
  ) {}

  queuedUpdate(family: IPFamily): void {
    if (!this.oldestPendingQueued.has(family)) this.oldestPendingQueued.set(family, this.clock.now());
  }

  updated(family: IPFamily): void {
    this.oldestPendingQueued.delete(family);
    this.lastUpdated.set(family, this.clock.now());
  }

  syncNodeEligible(eligible: boolean): void {
    this.eligible = eligible;
  }

  nodeEligible(): boolean {
    return this.eligible;
  }

  isHealthy(): boolean {
    return this.health().healthy;
  }

  health(): ProxyHealth {
    const currentTime = this.clock.now();
    const status: Partial<Record<IPFamily, ProxierHealth>> = {};
    let lastUpdated: number | undefined;
    let healthy = true;
    for (const [family, updatedAt] of this.lastUpdated) {
      if (lastUpdated === undefined || updatedAt > lastUpdated) lastUpdated = updatedAt;
      const queuedAt = this.oldestPendingQueued.get(family);
      const familyHealthy = queuedAt === undefined || currentTime - queuedAt < this.healthTimeoutMs;
      if (!familyHealthy) healthy = false;
      status[family] = { lastUpdated: updatedAt, healthy: familyHealthy };
    }
    return { lastUpdated, currentTime, healthy, status };
  }
}
