/**
 * Localhost NodePorts in nftables mode (KEP-6032): built for a proxier when the gate is on.
 */
import { isFeatureEnabled, type Clock, type IPFamily, type Logger, type NodePortAddresses, type ProxyContext } from '@kube-proxy/core';
import { newProxyCounters, type FdBudget } from '@kube-proxy/userspace-proxy';
import { LocalhostNodePortListeners, type LocalhostListenerObserver } from './localhost-listeners.js';
import { LocalhostNodePorts } from './localhost-nodeports.js';

export const LOCALHOST_NODEPORTS_GATE = 'KubeProxyNFTablesLocalhostNodePorts';

/** What a run gives the localhost NodePorts of its proxiers (built once, in the plugin's prepare). */
export interface LocalhostRun {
  /** Descriptors the proxied connections of both families may hold. */
  readonly budget: FdBudget;
  readonly observer?: LocalhostListenerObserver;
}

/**
 * The localhost NodePorts of one proxier, or undefined when the gate is off (nothing changes then).
 * `nodePortAddresses` is the proxier's own, parsed once.
 */
export function localhostNodePortsFor(
  family: IPFamily,
  context: ProxyContext,
  nodePortAddresses: NodePortAddresses,
  run: LocalhostRun | undefined,
  deps: { readonly clock: Clock; readonly logger: Logger },
): LocalhostNodePorts | undefined {
  if (!isFeatureEnabled(context.config.featureGates, LOCALHOST_NODEPORTS_GATE)) return undefined;
  const proxyActive = nodePortAddresses.containsExplicitLoopback;
  deps.logger.info(proxyActive ? 'Serving localhost NodePorts with a userspace TCP proxy' : 'Rejecting localhost NodePort traffic (nodePortAddresses names no loopback address)', {
    gate: LOCALHOST_NODEPORTS_GATE,
  });
  const listeners =
    proxyActive && !context.dryRun && run !== undefined
      ? new LocalhostNodePortListeners({ family, counters: newProxyCounters(), budget: run.budget, clock: deps.clock, logger: deps.logger, ...(run.observer ? { observer: run.observer } : {}) })
      : undefined;
  return new LocalhostNodePorts({ family, proxyActive, ...(listeners ? { listeners } : {}) });
}

export { LocalhostNodePortListeners } from './localhost-listeners.js';
export type { LocalhostListenerObserver, LocalhostListenersOptions } from './localhost-listeners.js';
export { LocalhostNodePorts } from './localhost-nodeports.js';
export { localhostNodePortOf, type LocalhostNodePort } from './localhost-nodeport.js';
export { LocalhostMetrics, LOCALHOST_NODEPORT_LISTENERS, LOCALHOST_NODEPORT_LISTENER_CREATION_FAILURES, LOCALHOST_NODEPORT_REJECTED_PACKETS } from './localhost-metrics.js';
export { localhostRejectElement, rejectsOnLoopback, withLocalhostReject } from './localhost-reject-render.js';
export { LOCALHOST_REJECT_MAP, localhostRejectChain } from './localhost-names.js';
export { packetsOfChainListing, readLocalhostRejected } from './reject-counters.js';
