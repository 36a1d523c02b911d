import { parseIP } from '../model/ip.js';
import { FieldPath, type FieldError } from './field-error.js';
import {
  checkCIDR,
  checkFormat,
  checkIP,
  checkOneOf,
  optionalArray,
  optionalBoolean,
  optionalRecord,
  optionalString,
  stringList,
} from './field-checks.js';
import { isAbsent, isRecord, jsonType, quote } from './json-shape.js';
import { isDNS1123Subdomain, isQualifiedName } from './name-rules.js';

/** The annotation that preceded spec.loadBalancerSourceRanges; still honoured when the field is empty. */
export const ANNOTATION_LOAD_BALANCER_SOURCE_RANGES = 'service.beta.kubernetes.io/load-balancer-source-ranges';
export const LOAD_BALANCER_IP_MODES = ['Proxy', 'VIP'] as const;

/**
 * The Service's external addresses: spec.externalIPs (valid IPs), spec.loadBalancerSourceRanges or its
 * annotation (CIDRs, space padding tolerated as upstream does), allocateLoadBalancerNodePorts (a
 * boolean), loadBalancerClass (a qualified name), and status.loadBalancer.ingress (ip, a hostname that
 * is a DNS name and not an IP, ipMode VIP/Proxy only alongside an ip). Upstream refuses the
 * LoadBalancer fields on other types; the proxy ignores them there, so this does not.
 *
 * Upstream's ValidateNonSpecialIP (no loopback, link-local or unspecified external IPs) is policy
 * rather than syntax and is not applied here; the proxy renders such addresses safely.
 */
export function validateServiceExternal(svc: Record<string, unknown>, spec: Record<string, unknown>, errs: FieldError[]): void {
  const externalIPs = new FieldPath('spec.externalIPs');
  (stringList(spec['externalIPs'], externalIPs, errs) ?? []).forEach((ip, i) => checkIP(ip, externalIPs.index(i), errs));

  const rangesPath = new FieldPath('spec.loadBalancerSourceRanges');
  const ranges = stringList(spec['loadBalancerSourceRanges'], rangesPath, errs) ?? [];
  if (ranges.length > 0) {
    ranges.forEach((r, i) => checkCIDR(r.trim(), rangesPath.index(i), errs));
  } else {
    const annotations = isRecord(svc['metadata']) ? svc['metadata']['annotations'] : undefined;
    const value = isRecord(annotations) ? annotations[ANNOTATION_LOAD_BALANCER_SOURCE_RANGES] : undefined;
    if (typeof value === 'string') {
      const at = new FieldPath('metadata.annotations').key(ANNOTATION_LOAD_BALANCER_SOURCE_RANGES);
      const trimmed = value.trim();
      if (trimmed !== '') for (const r of trimmed.split(',')) checkCIDR(r.trim(), at, errs);
    }
  }

  optionalBoolean(spec['allocateLoadBalancerNodePorts'], new FieldPath('spec.allocateLoadBalancerNodePorts'), errs);
  if (!isAbsent(spec['loadBalancerClass'])) {
    const classPath = new FieldPath('spec.loadBalancerClass');
    const lbClass = optionalString(spec['loadBalancerClass'], classPath, errs);
    if (lbClass !== undefined) checkFormat(lbClass, isQualifiedName, classPath, errs);
  }

  validateLoadBalancerStatus(svc['status'], errs);
}

/** ValidateLoadBalancerStatus, with the ipMode rules of LoadBalancerIPMode (GA). */
function validateLoadBalancerStatus(statusValue: unknown, errs: FieldError[]): void {
  const status = optionalRecord(statusValue, new FieldPath('status'), errs);
  const lb = optionalRecord(status?.['loadBalancer'], new FieldPath('status.loadBalancer'), errs);
  const path = new FieldPath('status.loadBalancer.ingress');
  const ingress = optionalArray(lb?.['ingress'], path, errs) ?? [];
  ingress.forEach((raw, i) => {
    const at = path.index(i);
    if (!isRecord(raw)) {
      errs.push(at.error(`must be an object, got ${jsonType(raw)}`));
      return;
    }
    const ip = optionalString(raw['ip'], at.at('ip'), errs);
    if (ip) checkIP(ip, at.at('ip'), errs);
    const hostname = optionalString(raw['hostname'], at.at('hostname'), errs);
    if (hostname) {
      checkFormat(hostname, isDNS1123Subdomain, at.at('hostname'), errs);
      if (parseIP(hostname) !== undefined) {
        errs.push(at.at('hostname').error(`Invalid value: ${quote(hostname)}: must be a DNS name, not an IP address`));
      }
    }
    if (!isAbsent(raw['ipMode'])) {
      const mode = optionalString(raw['ipMode'], at.at('ipMode'), errs);
      if (ip === '') errs.push(at.at('ipMode').error('Forbidden: may not be specified when `ip` is not'));
      else if (mode !== undefined) checkOneOf(mode, LOAD_BALANCER_IP_MODES, at.at('ipMode'), errs);
    }
  });
}
