import { isFeatureEnabled } from '../../config/feature-gates.js';

/**
 * The feature gates that change which endpoints topology lets traffic use, resolved once from the
 * configuration so that every backend passes the same answer to categorizeEndpoints. Core owns what
 * they mean; backends only carry them from their ProxyContext's config to the call.
 */
export interface TopologyGates {
  /**
   * PreferSameTrafficDistribution (beta, default on): honour the node hints the EndpointSlice
   * controller writes for `trafficDistribution: PreferSameNode`. Off: node hints are ignored and zone
   * hints (written for PreferSameZone / PreferClose, and by the controller alongside node hints) decide,
   * as upstream's topologyModeFromHints.
   */
  readonly preferSameTrafficDistribution: boolean;
}

/** Every gate at its default (v1.34): what categorizeEndpoints uses when given none. */
export const DEFAULT_TOPOLOGY_GATES: TopologyGates = Object.freeze({ preferSameTrafficDistribution: true });

/** The topology gates for a configuration's `featureGates` (AllBeta applies, as isFeatureEnabled). */
export function topologyGates(featureGates: Readonly<Record<string, boolean>>): TopologyGates {
  return { preferSameTrafficDistribution: isFeatureEnabled(featureGates, 'PreferSameTrafficDistribution') };
}
