/**
 * The metrics of localhost NodePorts in nftables mode, as upstream v1.37 defines them (kubernetes
 * PR #138427, pkg/proxy/metrics): defined only when the gate is on (they say nothing otherwise).
 * The rejected-packets counter is the kernel's: read from the reject chains' counters before each
 * scrape and added to the Prometheus counter by difference (a chain rewritten since, e.g. after
 * the table was rebuilt, starts again from zero, so a smaller value counts in full).
 */
import type { CommandExecutor, IPFamily, MetricDefinition, MetricsRegistry, Protocol } from '@kube-proxy/core';
import type { NftFamily } from '../nft/nft-objects.js';
import type { LocalhostListenerObserver } from './localhost-listeners.js';
import { readLocalhostRejected } from './reject-counters.js';

export const LOCALHOST_NODEPORT_LISTENERS: MetricDefinition = {
  name: 'nftables_localhost_nodeport_listeners',
  help: 'Number of localhost NodePort userspace proxy listeners',
  labelNames: ['ip_family'],
};

export const LOCALHOST_NODEPORT_LISTENER_CREATION_FAILURES: MetricDefinition = {
  name: 'nftables_localhost_nodeport_listener_creation_failures_total',
  help: 'Number of localhost NodePort userspace proxy listener creation failures.',
  labelNames: ['ip_family'],
};

export const LOCALHOST_NODEPORT_REJECTED_PACKETS: MetricDefinition = {
  name: 'nftables_localhost_nodeport_rejected_packets_total',
  help: 'Number of packets rejected on localhost NodePorts. UDP and SCTP are always rejected; TCP is rejected when the localhost NodePort proxy is not running',
  labelNames: ['ip_family', 'protocol'],
};

/** One run's localhost NodePort metrics (both families). */
export class LocalhostMetrics implements LocalhostListenerObserver {
  private readonly listenerGauge;
  private readonly failures;
  private readonly rejected;
  private readonly lastRead = new Map<string, number>();

  constructor(registry: MetricsRegistry) {
    this.listenerGauge = registry.gauge(LOCALHOST_NODEPORT_LISTENERS);
    this.failures = registry.counter(LOCALHOST_NODEPORT_LISTENER_CREATION_FAILURES);
    this.rejected = registry.counter(LOCALHOST_NODEPORT_REJECTED_PACKETS);
  }

  listeners(family: IPFamily, count: number): void {
    this.listenerGauge.set({ ip_family: family }, count);
    // The failures series is there (0) from the first sync on, not only after a failure.
    this.failures.inc({ ip_family: family }, 0);
  }

  creationFailed(family: IPFamily): void {
    this.failures.inc({ ip_family: family });
  }

  /** Registers the kernel read for `families` with the registry's scrape (when it has one). */
  readBeforeScrape(registry: MetricsRegistry, executor: CommandExecutor, families: readonly IPFamily[]): void {
    registry.beforeScrape?.(async () => {
      for (const family of families) this.addRejected(family, await readLocalhostRejected(executor, nftFamilyOf(family)));
    });
  }

  /** Adds what the kernel counted since the last read. */
  addRejected(family: IPFamily, counts: ReadonlyMap<Protocol, number>): void {
    for (const [protocol, packets] of counts) {
      const key = `${family}/${protocol}`;
      const last = this.lastRead.get(key);
      const delta = last === undefined || packets < last ? packets : packets - last;
      this.lastRead.set(key, packets);
      this.rejected.inc({ ip_family: family, protocol }, delta);
    }
  }
}

function nftFamilyOf(family: IPFamily): NftFamily {
  return family === 'IPv6' ? 'ip6' : 'ip';
}
