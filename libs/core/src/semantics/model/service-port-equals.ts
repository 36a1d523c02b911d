import type { ServicePort } from './service-port.js';

/**
 * Field-by-field equality of two ServicePorts: what upstream gets from reflect.DeepEqual when it
 * decides that an update of a Service changed nothing a proxier cares about.
 */
export function servicePortEquals(a: ServicePort, b: ServicePort): boolean {
  if (a === b) return true;
  return (
    a.name.key === b.name.key &&
    a.name.protocol === b.name.protocol &&
    a.family === b.family &&
    a.clusterIP === b.clusterIP &&
    a.port === b.port &&
    a.protocol === b.protocol &&
    a.nodePort === b.nodePort &&
    a.sessionAffinityClientIP === b.sessionAffinityClientIP &&
    a.stickyMaxAgeSeconds === b.stickyMaxAgeSeconds &&
    a.externalPolicyLocal === b.externalPolicyLocal &&
    a.internalPolicyLocal === b.internalPolicyLocal &&
    a.healthCheckNodePort === b.healthCheckNodePort &&
    a.trafficDistribution === b.trafficDistribution &&
    a.hintsAnnotation === b.hintsAnnotation &&
    a.externallyAccessible === b.externallyAccessible &&
    a.usesClusterEndpoints === b.usesClusterEndpoints &&
    a.usesLocalEndpoints === b.usesLocalEndpoints &&
    sameStrings(a.externalIPs, b.externalIPs) &&
    sameStrings(a.loadBalancerVIPs, b.loadBalancerVIPs) &&
    sameStrings(a.loadBalancerSourceRanges, b.loadBalancerSourceRanges)
  );
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
