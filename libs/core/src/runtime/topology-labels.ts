import { LABEL_TOPOLOGY_ZONE } from '../semantics/model/well-known.js';

/**
 * Node labels that change which endpoints this node routes to. Upstream's NodeTopologyConfig only
 * forwards the zone label, since CategorizeEndpoints reads nothing else (region is not consulted).
 */
export const TOPOLOGY_LABELS: readonly string[] = [LABEL_TOPOLOGY_ZONE];

export function topologyLabelsDiffer(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): boolean {
  return TOPOLOGY_LABELS.some((label) => a[label] !== b[label]);
}
