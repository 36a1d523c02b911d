export { ProxyState, type ProxyStateOptions } from './proxy-state.js';
export { TOPOLOGY_LABELS, topologyLabelsDiffer } from './topology-labels.js';
export { DualStackProvider } from './dual-stack-provider.js';
export { ProxierBase, type ProxierBaseOptions } from './proxier-base.js';
export { resolveObservers, resolveOptional, type ProxierObservers } from './observers.js';
export { reportSuccessfulSync, type SyncedReport } from './report-synced.js';
export { resolveBackendPorts, type BackendPorts } from './backend-ports.js';
