/**
 * A ServicePort for tests: a plain IPv4 TCP ClusterIP port with every field at its "nothing set" value,
 * overridden by what the test cares about. One builder instead of a full object literal per spec, so a
 * field added to ServicePort is added here once. (Exported like core's other testing fakes.)
 */
import { servicePortName } from '../semantics/model/service-port-name.js';
import type { ServicePort } from '../semantics/model/service-port.js';

export function testServicePort(overrides: Partial<ServicePort> = {}): ServicePort {
  return {
    name: servicePortName('ns1', 'svc1', 'p80', overrides.protocol ?? 'TCP'),
    family: 'IPv4',
    clusterIP: '172.30.0.41',
    port: 80,
    protocol: 'TCP',
    nodePort: 0,
    externalIPs: [],
    loadBalancerVIPs: [],
    loadBalancerSourceRanges: [],
    sessionAffinityClientIP: false,
    stickyMaxAgeSeconds: 0,
    externalPolicyLocal: false,
    internalPolicyLocal: false,
    healthCheckNodePort: 0,
    trafficDistribution: '',
    hintsAnnotation: '',
    externallyAccessible: false,
    usesClusterEndpoints: true,
    usesLocalEndpoints: false,
    ...overrides,
  };
}
