import type { V1Service } from '@kubernetes/client-node';

/**
 * Service-level policy predicates, as k8s.io/kubernetes/pkg/api/v1/service does them. They look at the
 * Service type rather than at the resulting ports, so they are decided once per Service.
 */

/** spec.type with the API default applied (an omitted type is ClusterIP). */
export function serviceType(svc: V1Service): string {
  return svc.spec?.type || 'ClusterIP';
}

/** Whether the Service type can receive traffic from outside the cluster (NodePort, LB, or externalIPs). */
export function serviceTypeExternallyAccessible(svc: V1Service): boolean {
  const type = serviceType(svc);
  if (type === 'LoadBalancer' || type === 'NodePort') return true;
  return type === 'ClusterIP' && (svc.spec?.externalIPs?.length ?? 0) > 0;
}

/** externalTrafficPolicy: Local, which only means anything for externally accessible types. */
export function externalPolicyLocal(svc: V1Service): boolean {
  return serviceTypeExternallyAccessible(svc) && svc.spec?.externalTrafficPolicy === 'Local';
}

export function internalPolicyLocal(svc: V1Service): boolean {
  return svc.spec?.internalTrafficPolicy === 'Local';
}

/** Only LoadBalancer services with externalTrafficPolicy: Local get a health-check node port. */
export function needsHealthCheck(svc: V1Service): boolean {
  return serviceType(svc) === 'LoadBalancer' && externalPolicyLocal(svc);
}
