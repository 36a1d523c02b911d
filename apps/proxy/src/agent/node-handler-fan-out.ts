import type { NodeHandler } from '@kube-proxy/core';

/** One NodeHandler that forwards every event to each of `handlers`, in order (the source takes one). */
export function fanOutNodeHandler(...handlers: NodeHandler[]): NodeHandler {
  return {
    onNodeAdd: (node) => handlers.forEach((h) => h.onNodeAdd(node)),
    onNodeUpdate: (previous, current) => handlers.forEach((h) => h.onNodeUpdate(previous, current)),
    onNodeDelete: (node) => handlers.forEach((h) => h.onNodeDelete(node)),
    onNodeSynced: () => handlers.forEach((h) => h.onNodeSynced()),
  };
}
