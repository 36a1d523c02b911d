import { ProxyState, nullLogger } from '@kube-proxy/core';
import type { ScaleCluster } from './scale-cluster.js';

/** Core's ProxyState for node-0 (IPv4) with a synthetic cluster fed in and its changes applied, as after a first sync. */
export function loadedState(cluster: ScaleCluster): ProxyState {
  const state = new ProxyState({ family: 'IPv4', nodeName: 'node-0', logger: nullLogger, onChange: () => undefined });
  for (const s of cluster.services) state.onServiceAdd(s);
  for (const s of cluster.slices) state.onEndpointSliceAdd(s);
  state.onServicesSynced();
  state.onEndpointSlicesSynced();
  state.applyPendingChanges();
  return state;
}
