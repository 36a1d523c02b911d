import type { EndpointSliceHandler, NodeHandler, ServiceHandler } from './handlers.js';

/**
 * A proxier: takes the cluster's Services/EndpointSlices/Node and keeps a datapath in step.
 * Upstream's proxy.Provider.
 */
export interface Provider extends ServiceHandler, EndpointSliceHandler, NodeHandler {
  /** Request a sync as soon as the rate limits allow (never synchronous). */
  sync(): void;
  /** Runs the periodic and on-demand sync loop until stop(); resolves when stopped. */
  syncLoop(): Promise<void>;
  /** Stops the loop. Programmed rules stay in place (a restart must not interrupt traffic). */
  stop(): void;
  /**
   * Resolves after the first successful sync (used by --once). Rejects if the provider is stopped first.
   */
  firstSync(): Promise<void>;
  /**
   * Resolves once the work a sync deferred to a later one is done (nftables deletes the chains a sync
   * flushed a second later, as upstream). --once waits for it, so that it exits with the table a
   * running proxy would converge to. Optional: a provider that defers nothing need not have it.
   */
  settled?(): Promise<void>;
  /**
   * ServiceCIDRHandler. Optional so that plugins written against the first version of this contract
   * still type-check; the host app watches ServiceCIDRs only for a provider that has it.
   */
  onServiceCIDRsChanged?(cidrs: readonly string[]): void;
}

export const PROVIDER = Symbol.for('kube-proxy.Provider');
