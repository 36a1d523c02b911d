import type { V1Service } from '@kubernetes/client-node';
import { featureEnabled } from '../../config/effective-feature-gates.js';
import type { Logger } from '../../host/logger.js';
import { formatIP, isZeroCIDR, parseCIDR, parseIP } from './ip.js';
import type { IPFamily } from './protocol.js';

/**
 * The per-family address lists of a Service. Entries of the other family are expected in dual-stack
 * clusters and dropped quietly; entries that do not parse are dropped with a warning.
 */

/**
 * spec.externalIPs of `family`, canonicalised. With the AllowServiceExternalIPs gate off (deprecated
 * since v1.36, KEP-5707) the field is ignored: a Service then has no external IPs for any proxier, as
 * upstream's service info drops them. `allowExternalIPs` defaults to the process's gate (set once by the
 * CLI), so every backend, plugins included, gets the same list; explain passes its own configuration's.
 */
export function externalIPsOfFamily(
  svc: V1Service,
  family: IPFamily,
  ref: string,
  logger: Logger,
  allowExternalIPs: boolean = featureEnabled('AllowServiceExternalIPs'),
): string[] {
  const out: string[] = [];
  const raw = svc.spec?.externalIPs;
  if (!Array.isArray(raw)) return out;
  if (!allowExternalIPs) {
    if (raw.length > 0) logger.debug('Ignoring spec.externalIPs: the AllowServiceExternalIPs feature gate is off', { service: ref, field: 'spec.externalIPs' });
    return out;
  }
  raw.forEach((text, i) => {
    const ip = parseIP(text);
    if (ip === undefined) {
      logger.warn('Skipping invalid external IP', { service: ref, field: `spec.externalIPs[${i}]`, value: text });
    } else if (ip.family === family) {
      out.push(formatIP(ip));
    }
  });
  return out;
}

/**
 * status.loadBalancer.ingress IPs of `family`. Only VIP-mode ingresses (ipMode unset or "VIP") count:
 * with ipMode "Proxy" the load balancer rewrites the destination, so the node never sees the LB IP.
 */
export function loadBalancerVIPsOfFamily(svc: V1Service, family: IPFamily, ref: string, logger: Logger): string[] {
  const out: string[] = [];
  const ingress = svc.status?.loadBalancer?.ingress;
  if (!Array.isArray(ingress)) return out;
  ingress.forEach((ing, i) => {
    if (typeof ing?.ip !== 'string' || ing.ip === '') return;
    if (ing.ipMode !== undefined && ing.ipMode !== null && ing.ipMode !== 'VIP') return;
    const ip = parseIP(ing.ip);
    if (ip === undefined) {
      logger.warn('Skipping invalid load balancer ingress IP', {
        service: ref,
        field: `status.loadBalancer.ingress[${i}].ip`,
        value: ing.ip,
      });
    } else if (ip.family === family) {
      out.push(formatIP(ip));
    }
  });
  return out;
}

/**
 * spec.loadBalancerSourceRanges of `family` as canonical CIDRs. Whitespace padding is trimmed because
 * API validation historically let it through. A zero-length prefix of this family (0.0.0.0/0, ::/0)
 * allows everyone, which is what an empty list means, so the list collapses to empty. When every range
 * belongs to the other family the result is also empty: upstream then installs no source filter for
 * this family, and we keep that behaviour rather than invent a deny-all.
 */
export function sourceRangesOfFamily(svc: V1Service, family: IPFamily, ref: string, logger: Logger): string[] {
  const out: string[] = [];
  const raw = svc.spec?.loadBalancerSourceRanges;
  if (!Array.isArray(raw)) return out;
  let allowsAll = false;
  raw.forEach((text, i) => {
    const cidr = typeof text === 'string' ? parseCIDR(text.trim()) : undefined;
    if (cidr === undefined) {
      logger.warn('Skipping invalid load balancer source range', {
        service: ref,
        field: `spec.loadBalancerSourceRanges[${i}]`,
        value: text,
      });
      return;
    }
    if (cidr.family !== family) return;
    if (isZeroCIDR(cidr)) allowsAll = true;
    if (!out.includes(cidr.text)) out.push(cidr.text);
  });
  return allowsAll ? [] : out;
}
