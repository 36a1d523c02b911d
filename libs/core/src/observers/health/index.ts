export { PROXIER_HEALTH_UPDATER, type ProxierHealthUpdater } from './proxier-health-updater.js';
export type { ProxierHealth, ProxyHealth, ProxyHealthChecker } from './proxy-health.js';
export { ProxierHealthTracker } from './proxier-health-tracker.js';
export { isNodeEligible, TO_BE_DELETED_TAINT } from './node-eligibility.js';
export { SERVICE_HEALTH_SERVER, type ServiceHealthServer } from './service-health-server.js';
