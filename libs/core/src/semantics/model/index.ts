export { type IPFamily, isProtocol, type Protocol, PROTOCOLS } from './protocol.js';
export { namespacedName, servicePortName, type ServicePortName } from './service-port-name.js';
export type { ServicePort } from './service-port.js';
export { type Endpoint, joinHostPort } from './endpoint.js';
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
export { isPortNumber } from './port-number.js';
export {
  ANNOTATION_LAST_CHANGE_TRIGGER_TIME,
  ANNOTATION_TOPOLOGY_AWARE_HINTS,
  ANNOTATION_TOPOLOGY_MODE,
  DEFAULT_CLIENT_IP_TIMEOUT_SECONDS,
  LABEL_SERVICE_NAME,
  LABEL_TOPOLOGY_ZONE,
} from './well-known.js';
export { clusterIPForFamily, hasClusterIP } from './cluster-ip.js';
export {
  externalPolicyLocal,
  internalPolicyLocal,
  needsHealthCheck,
  serviceType,
  serviceTypeExternallyAccessible,
} from './service-policy.js';
export { externalIPsOfFamily, loadBalancerVIPsOfFamily, sourceRangesOfFamily } from './service-addresses.js';
export { servicePortEquals } from './service-port-equals.js';
export { servicePortsFromService } from './service-port-from-service.js';
