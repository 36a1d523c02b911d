import type { ServicePort } from '../model/service-port.js';
import { nullLogger, type Logger } from '../../host/logger.js';
import { ReadonlyMapView } from './readonly-map-view.js';
import type { ServiceChangeTracker, ServicePortsByName } from './service-change-tracker.js';
import type { ServicePortMap, UpdateServiceMapResult } from './types.js';

/**
 * The service ports a proxier serves, keyed by ServicePortName.key (upstream's ServicePortMap), plus
 * an index of health-check node ports maintained per changed Service instead of rebuilt per sync.
 */
export class MutableServicePortMap extends ReadonlyMapView<string, ServicePort> implements ServicePortMap {
  private readonly healthCheckPorts = new Map<string, number>();

  constructor(private readonly logger: Logger = nullLogger) {
    super();
  }

  /**
   * Applies and drains the tracker's pending changes: each changed Service's new ports are merged in,
   * then the ports it no longer has are removed (ports present before and after are updates, not
   * removals). UDP cluster IPs whose port went away are reported for conntrack cleanup.
   */
  update(tracker: ServiceChangeTracker): UpdateServiceMapResult {
    const updatedServices = new Set<string>();
    const deletedUDPClusterIPs = new Set<string>();
    for (const [service, change] of tracker.checkoutChanges()) {
      updatedServices.add(service);
      if (change.current !== null) {
        for (const [key, port] of change.current) this.entriesByKey.set(key, port);
      }
      if (change.previous !== null) {
        for (const [key, before] of change.previous) {
          const after = change.current?.get(key);
          if (after !== undefined) {
            // Upstream keys ports by name and protocol, so a UDP port that changed protocol is a
            // removal of the UDP port there; our name-only key turned it into an overwrite.
            if (before.protocol === 'UDP' && after.protocol !== 'UDP') deletedUDPClusterIPs.add(before.clusterIP);
            continue;
          }
          const removed = this.entriesByKey.get(key);
          if (removed === undefined) {
            this.logger.error('Service port to remove does not exist', { servicePort: key });
            continue;
          }
          if (removed.protocol === 'UDP') deletedUDPClusterIPs.add(removed.clusterIP);
          this.entriesByKey.delete(key);
        }
      }
      const hc = healthCheckNodePortOf(change.current);
      if (hc === 0) this.healthCheckPorts.delete(service);
      else this.healthCheckPorts.set(service, hc);
    }
    return { updatedServices, deletedUDPClusterIPs };
  }

  /** Health-check node port per namespaced name, for the Services that have one. */
  healthCheckNodePorts(): Map<string, number> {
    return new Map(this.healthCheckPorts);
  }
}

/** healthCheckNodePort is a Service-level field, so any port of the Service carries it. */
function healthCheckNodePortOf(ports: ServicePortsByName): number {
  if (ports === null) return 0;
  for (const port of ports.values()) if (port.healthCheckNodePort !== 0) return port.healthCheckNodePort;
  return 0;
}
