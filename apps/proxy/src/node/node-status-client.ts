import type { KubeApi } from '../sources/api/kube-api.js';
import { conditionsPatch, type NodeConditionJson } from './kube-proxy-ready-condition.js';

/** What the readiness reporter needs of the API: read one condition of the Node, patch conditions. */
export interface NodeStatusClient {
  /** The Node's condition of `type`, or undefined when it has none (or the Node does not exist). */
  getCondition(nodeName: string, type: string): Promise<NodeConditionJson | undefined>;
  /** Sets these conditions on the Node's status, leaving every other condition alone. */
  patchConditions(nodeName: string, conditions: readonly NodeConditionJson[]): Promise<void>;
}

const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/**
 * The NodeStatusClient over our API client: a GET of the Node (RBAC: nodes get) and a strategic
 * merge PATCH of its status subresource (RBAC: nodes/status patch), as node-problem-detector and
 * other kubelet-independent components set their conditions. Errors (ApiError etc.) propagate; the
 * reporter logs and retries them.
 */
export function apiNodeStatusClient(api: Pick<KubeApi, 'request'>, signal?: AbortSignal): NodeStatusClient {
  return {
    async getCondition(nodeName, type) {
      // The paths are written out in the calls: deploy-rbac.spec.ts reads them to check the RBAC grant.
      const node = await api.request<{ status?: { conditions?: NodeConditionJson[] } }>('GET', `/api/v1/nodes/${encodeURIComponent(nodeName)}`, signal ? { signal } : {});
      return node.status?.conditions?.find((c) => c.type === type);
    },
    async patchConditions(nodeName, conditions) {
      await api.request('PATCH', `/api/v1/nodes/${encodeURIComponent(nodeName)}/status`, {
        body: conditionsPatch(conditions),
        contentType: STRATEGIC_MERGE_PATCH,
        ...(signal ? { signal } : {}),
      });
    },
  };
}
