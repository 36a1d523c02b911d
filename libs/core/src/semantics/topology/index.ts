export type { CategorizedEndpoints } from './types.js';
export { categorizeEndpoints } from './categorize-endpoints.js';
export { DEFAULT_TOPOLOGY_GATES, topologyGates, type TopologyGates } from './topology-gates.js';
