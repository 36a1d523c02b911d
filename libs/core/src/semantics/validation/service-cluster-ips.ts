import { ipFamilyOf } from '../model/ip.js';
import { FieldPath, type FieldError } from './field-error.js';
import { checkIP, checkOneOf, optionalString, stringList } from './field-checks.js';
import { isAbsent, quote } from './json-shape.js';

export const IP_FAMILIES = ['IPv4', 'IPv6'] as const;
export const IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'] as const;

/** The Service's cluster IPs as the API server sees them after its normalisation of clusterIP/clusterIPs. */
export interface ClusterIPs {
  /** clusterIPs, or [clusterIP] when only the singular field is written (a hand-written manifest). */
  readonly ips: readonly string[];
  /** Where errors about `ips` point: spec.clusterIPs, or spec.clusterIP when that is what was written. */
  readonly path: FieldPath;
  /** Exactly one cluster IP, "None": a headless Service (which the proxy does not serve). */
  readonly headless: boolean;
  /** spec.ipFamilies as written ([] when unset). */
  readonly families: readonly string[];
}

/**
 * Reads spec.clusterIP, spec.clusterIPs and spec.ipFamilies. The API server copies a lone clusterIP
 * into clusterIPs (and the first of clusterIPs into clusterIP) before it validates, so either may be
 * written alone; when both are, they must agree.
 */
export function readClusterIPs(spec: Record<string, unknown>, errs: FieldError[]): ClusterIPs {
  const single = optionalString(spec['clusterIP'], new FieldPath('spec.clusterIP'), errs) ?? '';
  const listPath = new FieldPath('spec.clusterIPs');
  const list = stringList(spec['clusterIPs'], listPath, errs) ?? [];
  if (single !== '' && list.length > 0 && list[0] !== single) {
    errs.push(listPath.error('Invalid value: first value must match `clusterIP`'));
  }
  const fromSingle = list.length === 0 && single !== '';
  const ips = fromSingle ? [single] : list;
  const families = stringList(spec['ipFamilies'], new FieldPath('spec.ipFamilies'), errs) ?? [];
  return {
    ips,
    path: fromSingle ? new FieldPath('spec.clusterIP') : listPath,
    headless: ips.length === 1 && ips[0] === 'None',
    families,
  };
}

/**
 * ValidateServiceClusterIPsRelatedFields (not for ExternalName Services): ipFamilies are IPv4/IPv6
 * without repeats; ipFamilyPolicy is one of the three policies; cluster IPs are valid IPs ("None"
 * only as the first and only value, "" meaning not yet allocated), at most one per family, and each
 * of the family its ipFamilies entry names.
 */
export function validateClusterIPs(spec: Record<string, unknown>, c: ClusterIPs, errs: FieldError[]): void {
  const familiesPath = new FieldPath('spec.ipFamilies');
  const seen = new Set<string>();
  c.families.forEach((family, i) => {
    checkOneOf(family, IP_FAMILIES, familiesPath.index(i), errs);
    if (seen.has(family)) errs.push(familiesPath.index(i).error(`Duplicate value: ${quote(family)}`));
    seen.add(family);
  });

  if (!isAbsent(spec['ipFamilyPolicy'])) {
    const policyPath = new FieldPath('spec.ipFamilyPolicy');
    const policy = optionalString(spec['ipFamilyPolicy'], policyPath, errs);
    if (policy !== undefined) checkOneOf(policy, IP_FAMILY_POLICIES, policyPath, errs);
  }

  let invalid = false;
  const ipPath = (i: number) => (c.path.path === 'spec.clusterIP' ? c.path : c.path.index(i));
  c.ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (c.ips.length > 1) {
        invalid = true;
        errs.push(c.path.error("Invalid value: 'None' must be the first and only value"));
      }
      return;
    }
    if (!checkIP(ip, ipPath(i), errs)) invalid = true;
  });
  if (c.ips.length > 2) errs.push(c.path.error('Invalid value: may only hold up to 2 values'));
  if (invalid) return;

  if (c.ips.length > 1) {
    const fams = new Set(c.ips.map((ip) => ipFamilyOf(ip)));
    if (c.ips.length !== fams.size || fams.size !== 2) {
      errs.push(c.path.error('Invalid value: may specify no more than one IP for each IP family'));
    }
  }
  if (!c.headless) {
    c.ips.forEach((ip, i) => {
      if (i >= c.families.length) return;
      const isV6 = ipFamilyOf(ip) === 'IPv6';
      if (c.families[i] === 'IPv4' && isV6) {
        errs.push(ipPath(i).error(`Invalid value: ${quote(ip)}: expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      } else if (c.families[i] === 'IPv6' && !isV6) {
        errs.push(ipPath(i).error(`Invalid value: ${quote(ip)}: expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
      }
    });
  }
}
