import type { ServiceHealthServer } from '@kube-proxy/core';

/** Used in --dry-run: a health-check node port is a real port on the node, so none is opened. */
export const noopServiceHealthServer: ServiceHealthServer = {
  syncServices: async () => undefined,
  syncEndpoints: async () => undefined,
};
