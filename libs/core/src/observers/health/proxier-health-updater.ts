import type { IPFamily } from '../../semantics/model/protocol.js';

/**
 * What a proxier tells the health server (upstream's ProxierHealthUpdater). /healthz and /livez
 * fail when a family has had a change queued for longer than the health timeout (2 × syncPeriod)
 * without a successful sync, so a wedged sync loop shows up to load balancers and the kubelet.
 */
export interface ProxierHealthUpdater {
  /** A change that needs programming was received for `family` (only the oldest pending one counts). */
  queuedUpdate(family: IPFamily): void;
  /** `family`'s rules now reflect the current state (also called once when its sync loop starts). */
  updated(family: IPFamily): void;
  /** Whether this Node may take load-balancer traffic (KEP-3836): false while it is being deleted. */
  syncNodeEligible(eligible: boolean): void;
}

export const PROXIER_HEALTH_UPDATER = Symbol.for('kube-proxy.ProxierHealthUpdater');
