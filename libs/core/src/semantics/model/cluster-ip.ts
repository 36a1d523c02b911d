import type { V1Service } from '@kubernetes/client-node';
import { ipFamilyOf } from './ip.js';
import type { IPFamily } from './protocol.js';

/** Headless (`None`) and unallocated ("") cluster IPs mean the Service is not proxied at all. */
export function hasClusterIP(svc: V1Service): boolean {
  const clusterIP = svc.spec?.clusterIP;
  return typeof clusterIP === 'string' && clusterIP !== '' && clusterIP !== 'None';
}

/**
 * The Service's cluster IP of one family, or "" when it has none of that family. Services written by
 * API servers that predate dual-stack have no ipFamilies; their single clusterIP is then matched by
 * its own family.
 */
export function clusterIPForFamily(svc: V1Service, family: IPFamily): string {
  const spec = svc.spec;
  if (spec === undefined) return '';
  const families = Array.isArray(spec.ipFamilies) ? spec.ipFamilies : [];
  if (families.length === 0) {
    const clusterIP = spec.clusterIP;
    if (typeof clusterIP !== 'string' || clusterIP === '' || clusterIP === 'None') return '';
    // Unparseable text is handed back to the caller only for the IPv4 proxier, where Go's
    // IsIPv6String(garbage) == false would also land it; the caller then rejects it with a warning.
    const isV6 = ipFamilyOf(clusterIP) === 'IPv6';
    return isV6 === (family === 'IPv6') ? clusterIP : '';
  }
  const clusterIPs = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [];
  const index = families.indexOf(family);
  if (index < 0 || index >= clusterIPs.length) return '';
  const ip = clusterIPs[index];
  return typeof ip === 'string' ? ip : '';
}
