import type { Endpoint } from '../model/endpoint.js';

/** The endpoint sets one service port routes to, decided once in core for every backend. */
export interface CategorizedEndpoints {
  /** Endpoints for cluster-policy traffic; null when the service does not use cluster endpoints. */
  readonly clusterEndpoints: readonly Endpoint[] | null;
  /** Endpoints for Local-policy traffic; null when the service does not use local endpoints. */
  readonly localEndpoints: readonly Endpoint[] | null;
  /** Union of the above, de-duplicated: every endpoint that needs a rule/chain. */
  readonly allReachableEndpoints: readonly Endpoint[];
  /** Whether the service has any usable endpoints at all (used for REJECT vs DROP decisions). */
  readonly hasAnyEndpoints: boolean;
}
