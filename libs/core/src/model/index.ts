export * from './protocol.js';
export * from './service-port-name.js';
export type { ServicePort } from './service-port.js';
export * from './endpoint.js';
// ipFamilyOf, isValidIP and isValidCIDR also exist in config/net-text.ts (returning 4 | 6), so the
// root barrel would see them twice; in-package code imports them from './ip.js' directly.
export {
  canonicalIP,
  cidrContains,
  formatIP,
  isZeroCIDR,
  parseCIDR,
  parseIP,
  type CIDR,
  type IPAddress,
} from './ip.js';
export * from './port-number.js';
export * from './well-known.js';
export * from './cluster-ip.js';
export * from './service-policy.js';
export * from './service-addresses.js';
export * from './service-port-equals.js';
export * from './service-port-from-service.js';
