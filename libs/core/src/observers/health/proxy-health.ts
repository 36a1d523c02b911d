import type { IPFamily } from '../../semantics/model/protocol.js';

/** The health of one family's proxier. */
export interface ProxierHealth {
  /** When it last programmed everything (ms since the epoch). */
  readonly lastUpdated: number;
  readonly healthy: boolean;
}

/** The health of the proxy as a whole, as upstream's ProxyHealth (v1.33+ /healthz body). */
export interface ProxyHealth {
  /** The most recent lastUpdated over all families; undefined before any family started syncing. */
  readonly lastUpdated: number | undefined;
  readonly currentTime: number;
  /** True when every family is healthy (Node eligibility is not part of it). */
  readonly healthy: boolean;
  readonly status: Partial<Record<IPFamily, ProxierHealth>>;
}

/** Read side of the proxier health state, used by the HTTP servers. */
export interface ProxyHealthChecker {
  health(): ProxyHealth;
  /** Shorthand for health().healthy (upstream's IsHealthy, which ignores the Node). */
  isHealthy(): boolean;
  nodeEligible(): boolean;
}
