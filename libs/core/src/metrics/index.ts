export * from './proxy-metrics.js';
export * from './buckets.js';
export * from './prom-proxy-metrics.js';
