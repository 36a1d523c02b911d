import type { Endpoint } from '../model/endpoint.js';
import type { ServicePort } from '../model/service-port.js';
import { LABEL_TOPOLOGY_ZONE } from '../model/well-known.js';
import { DEFAULT_TOPOLOGY_GATES, type TopologyGates } from './topology-gates.js';
import type { CategorizedEndpoints } from './types.js';

/** How cluster-policy endpoints are narrowed by topology hints. */
export type TopologyMode = '' | 'PreferSameZone' | 'PreferSameNode';

const EMPTY: readonly Endpoint[] = [];

/**
 * Splits one service port's endpoints into the sets traffic may use from this node (upstream's
 * CategorizeEndpoints):
 *
 * - `clusterEndpoints` (null unless the port uses Cluster policy): ready endpoints, narrowed to those
 *   hinted for this node or zone when every ready endpoint carries hints and some are for us;
 * - `localEndpoints` (null unless the port uses Local policy): ready endpoints on this node; topology
 *   does not apply to them.
 *
 * Each set falls back, independently, to serving-and-terminating endpoints when it has no ready one,
 * so connections keep flowing while a workload rolls over. The topology mode follows the hints the
 * EndpointSlice controller wrote (it only writes them for trafficDistribution or the topology
 * annotation), which is why the Service fields themselves are not consulted here. An empty set means
 * the port uses that policy but nothing is usable; null means the port never uses that policy.
 * `gates` carries the feature gates that change the outcome (PreferSameTrafficDistribution: with it
 * off, node hints are ignored and zone hints decide, as upstream).
 */
export function categorizeEndpoints(
  endpoints: readonly Endpoint[],
  svc: ServicePort,
  nodeName: string,
  nodeLabels: Readonly<Record<string, string>>,
  gates: TopologyGates = DEFAULT_TOPOLOGY_GATES,
): CategorizedEndpoints {
  if (endpoints.length === 0) {
    return {
      clusterEndpoints: svc.usesClusterEndpoints ? EMPTY : null,
      localEndpoints: svc.usesLocalEndpoints ? EMPTY : null,
      allReachableEndpoints: EMPTY,
      hasAnyEndpoints: false,
    };
  }

  let clusterEndpoints: readonly Endpoint[] | null = null;
  let topologyMode: TopologyMode = '';
  let hasAnyEndpoints = false;

  if (svc.usesClusterEndpoints) {
    const zone = nodeLabels[LABEL_TOPOLOGY_ZONE] ?? '';
    topologyMode = topologyModeFromHints(endpoints, nodeName, zone, gates.preferSameTrafficDistribution);
    const mode = topologyMode;
    clusterEndpoints = endpoints.filter((ep) => ep.ready && availableForTopology(ep, mode, nodeName, zone));
    // Topology was already abandoned above if no ready endpoint matched it, so an empty list here
    // means nothing is ready anywhere.
    if (clusterEndpoints.length === 0) clusterEndpoints = endpoints.filter((ep) => ep.serving && ep.terminating);
    if (clusterEndpoints.length > 0) hasAnyEndpoints = true;
  }

  if (!svc.usesLocalEndpoints) {
    return { clusterEndpoints, localEndpoints: null, allReachableEndpoints: clusterEndpoints ?? EMPTY, hasAnyEndpoints };
  }

  let hasLocalReady = false;
  let hasLocalServingTerminating = false;
  for (const ep of endpoints) {
    if (ep.ready) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalReady = true;
    } else if (ep.serving && ep.terminating) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalServingTerminating = true;
    }
  }

  let localEndpoints: readonly Endpoint[] = EMPTY;
  let localUsesTerminating = false;
  if (hasLocalReady) {
    localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.ready);
  } else if (hasLocalServingTerminating) {
    localUsesTerminating = true;
    localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.serving && ep.terminating);
  }

  if (clusterEndpoints === null) {
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: localEndpoints, hasAnyEndpoints };
  }
  if (topologyMode === '' && !localUsesTerminating) {
    // Cluster then holds every ready endpoint and local only ready ones: cluster is a superset.
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: clusterEndpoints, hasAnyEndpoints };
  }

  // Cluster may hold remote endpoints local lacks, and local may hold terminating or topologically
  // excluded local endpoints cluster lacks.
  const seen = new Set<string>();
  const all: Endpoint[] = [];
  for (const list of [clusterEndpoints, localEndpoints]) {
    for (const ep of list) {
      if (seen.has(ep.key)) continue;
      seen.add(ep.key);
      all.push(ep);
    }
  }
  return { clusterEndpoints, localEndpoints, allReachableEndpoints: all, hasAnyEndpoints };
}

/**
 * PreferSameNode when the PreferSameTrafficDistribution gate is on, every ready endpoint has node
 * hints and one is hinted for this node (with the gate off node hints are not looked at); otherwise
 * PreferSameZone when every ready endpoint has zone hints and one is hinted for this zone; otherwise
 * no topology. All-or-nothing, because a partly hinted set means the controller is mid-update or gave
 * up, and routing by a partial view could overload the few hinted endpoints.
 */
export function topologyModeFromHints(endpoints: readonly Endpoint[], nodeName: string, zone: string, nodeHintsEnabled: boolean): TopologyMode {
  let hasReady = false;
  let allHaveNodeHints = true;
  let hasForNode = false;
  let allHaveZoneHints = true;
  let hasForZone = false;
  for (const ep of endpoints) {
    if (!ep.ready) continue;
    hasReady = true;
    if (ep.nodeHints === null || ep.nodeHints.size === 0) allHaveNodeHints = false;
    else if (ep.nodeHints.has(nodeName)) hasForNode = true;
    if (ep.zoneHints === null || ep.zoneHints.size === 0) allHaveZoneHints = false;
    else if (ep.zoneHints.has(zone)) hasForZone = true;
  }
  if (!hasReady) return '';
  if (nodeHintsEnabled && allHaveNodeHints && hasForNode) return 'PreferSameNode';
  if (allHaveZoneHints && hasForZone) return 'PreferSameZone';
  return '';
}

function availableForTopology(ep: Endpoint, mode: TopologyMode, nodeName: string, zone: string): boolean {
  switch (mode) {
    case '':
      return true;
    case 'PreferSameNode':
      return ep.nodeHints?.has(nodeName) ?? false;
    case 'PreferSameZone':
      return ep.zoneHints?.has(zone) ?? false;
  }
}
