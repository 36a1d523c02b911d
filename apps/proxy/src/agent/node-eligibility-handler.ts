import type { V1Node } from '@kubernetes/client-node';
import { isNodeEligible, type NodeHandler, type ProxierHealthUpdater } from '@kube-proxy/core';

/**
 * Feeds the proxy's own Node into the health state (upstream's NodeEligibleHandler): /healthz fails
 * once the Node is deleted, terminating, or tainted for deletion by cluster-autoscaler.
 */
export class NodeEligibilityHandler implements NodeHandler {
  constructor(
    private readonly nodeName: string,
    private readonly health: ProxierHealthUpdater,
  ) {}

  onNodeAdd(node: V1Node): void {
    this.sync(node, false);
  }

  onNodeUpdate(_previous: V1Node, current: V1Node): void {
    this.sync(current, false);
  }

  onNodeDelete(node: V1Node): void {
    this.sync(node, true);
  }

  onNodeSynced(): void {
    // Nothing to wait for: the Node is eligible until an event says otherwise.
  }

  private sync(node: V1Node, deleted: boolean): void {
    if (node?.metadata?.name !== this.nodeName) return;
    this.health.syncNodeEligible(isNodeEligible(node, deleted));
  }
}
