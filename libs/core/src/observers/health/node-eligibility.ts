import type { V1Node } from '@kubernetes/client-node';

/** The taint cluster-autoscaler puts on a Node it is about to delete. */
export const TO_BE_DELETED_TAINT = 'ToBeDeletedByClusterAutoscaler';

/**
 * Whether a Node may still take load-balancer traffic (KEP-3836): not when it is gone, being deleted,
 * or tainted for deletion by cluster-autoscaler. Failing /healthz then lets load balancers drain
 * externalTrafficPolicy=Cluster connections before the node disappears.
 */
export function isNodeEligible(node: V1Node | undefined, deleted = false): boolean {
  if (deleted || node === undefined) return false;
  if (node.metadata?.deletionTimestamp) return false;
  return !(node.spec?.taints ?? []).some((t) => t.key === TO_BE_DELETED_TAINT);
}
