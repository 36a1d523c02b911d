/**
 * Public API of @kube-proxy/core. Backends and the app import only from here.
 */
export * from './model/index.js';
export * from './tracking/index.js';
export * from './topology/index.js';
export * from './plan/index.js';
export * from './runtime/index.js';
export * from './config/index.js';
export * from './capabilities/index.js';
export * from './ports/index.js';
export * from './contracts/index.js';
export * from './local-detect/index.js';
export * from './health/index.js';
export * from './metrics/index.js';
export * from './iptables-leftovers/index.js';
export * from './iptables/index.js';
export * from './conntrack/index.js';
export * from './validation/index.js';
export * from './render-safety/index.js';
