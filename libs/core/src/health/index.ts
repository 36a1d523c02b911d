export * from './proxier-health-updater.js';
export type * from './proxy-health.js';
export * from './proxier-health-tracker.js';
export * from './node-eligibility.js';
export * from './service-health-server.js';
