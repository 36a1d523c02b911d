export * from './protocol.js';
export * from './service-port-name.js';
export type { ServicePort } from './service-port.js';
export * from './endpoint.js';
// The one IP/CIDR implementation (ParseIPSloppy semantics); config validation and the backends use it.
export {
  canonicalIP,
  cidrContains,
  formatIP,
  ipFamilyOf,
  isDualStackCIDRs,
  isLoopbackIP,
  isValidCIDR,
  isValidIP,
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
export * from './testing-service-port.js';
