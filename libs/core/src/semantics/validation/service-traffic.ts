import { FieldPath, type FieldError } from './field-error.js';
import { checkOneOf, checkRange, optionalInt32, optionalRecord, optionalString } from './field-checks.js';
import { isAbsent } from './json-shape.js';

export const SESSION_AFFINITIES = ['ClientIP', 'None'] as const;
export const TRAFFIC_POLICIES = ['Cluster', 'Local'] as const;
/** Values this proxy knows; see validateTrafficDistribution for the others. */
export const TRAFFIC_DISTRIBUTIONS = ['PreferClose', 'PreferSameNode', 'PreferSameZone'] as const;
/** core.MaxClientIPServiceAffinitySeconds: one day. */
export const MAX_CLIENT_IP_AFFINITY_SECONDS = 86400;

/**
 * How a Service's traffic is steered, after the API's defaults (unset sessionAffinity is None, unset
 * traffic policies are Cluster, an unset health-check node port of a Local LoadBalancer is allocated):
 * sessionAffinity None or ClientIP, ClientIP's timeoutSeconds within 1..86400; external and internal
 * traffic policies Cluster or Local; healthCheckNodePort 1..65535; trafficDistribution, see
 * validateTrafficDistribution.
 *
 * Upstream also refuses some of these fields where they do not apply (externalTrafficPolicy on a
 * Service reachable only in-cluster, healthCheckNodePort unless LoadBalancer + Local, a
 * sessionAffinityConfig with None). The proxy ignores such fields there (core's service policy looks
 * at the type first), so an object carrying one is still served: being less strict than the API
 * server about a field without effect keeps hand-written manifests working and cannot change what
 * is programmed.
 */
export function validateServiceTraffic(spec: Record<string, unknown>, errs: FieldError[]): void {
  const affinityPath = new FieldPath('spec.sessionAffinity');
  const affinityText = optionalString(spec['sessionAffinity'], affinityPath, errs);
  const affinity = affinityText === '' ? 'None' : affinityText;
  if (affinity !== undefined) checkOneOf(affinity, SESSION_AFFINITIES, affinityPath, errs);
  const configPath = new FieldPath('spec.sessionAffinityConfig');
  if (affinity === 'ClientIP') {
    const config = optionalRecord(spec['sessionAffinityConfig'], configPath, errs);
    const clientIP = optionalRecord(config?.['clientIP'], configPath.at('clientIP'), errs);
    const timeoutPath = configPath.at('clientIP').at('timeoutSeconds');
    if (clientIP !== undefined && !isAbsent(clientIP['timeoutSeconds'])) {
      const timeout = optionalInt32(clientIP['timeoutSeconds'], timeoutPath, errs);
      if (timeout !== undefined && (timeout <= 0 || timeout > MAX_CLIENT_IP_AFFINITY_SECONDS)) {
        errs.push(timeoutPath.error(`Invalid value: ${timeout}: must be greater than 0 and less than ${MAX_CLIENT_IP_AFFINITY_SECONDS}`));
      }
    }
  }

  const etpPath = new FieldPath('spec.externalTrafficPolicy');
  const etp = optionalString(spec['externalTrafficPolicy'], etpPath, errs);
  if (etp !== undefined && etp !== '') checkOneOf(etp, TRAFFIC_POLICIES, etpPath, errs);

  const hcPath = new FieldPath('spec.healthCheckNodePort');
  const hc = optionalInt32(spec['healthCheckNodePort'], hcPath, errs);
  if (hc !== undefined && hc !== 0) checkRange(hc, 1, 65535, hcPath, errs);

  if (!isAbsent(spec['internalTrafficPolicy'])) {
    const itpPath = new FieldPath('spec.internalTrafficPolicy');
    const itp = optionalString(spec['internalTrafficPolicy'], itpPath, errs);
    if (itp !== undefined) checkOneOf(itp, TRAFFIC_POLICIES, itpPath, errs);
  }

  validateTrafficDistribution(spec['trafficDistribution'], errs);
}

/**
 * spec.trafficDistribution. The API server of this proxy's era accepts PreferClose, PreferSameZone and
 * PreferSameNode; a newer API server may accept values this proxy does not know yet, and the proxy
 * (like upstream's) then simply routes without a preference, so rejecting the whole Service would be
 * stricter than the API server that stored it. Such values are accepted when they have the shape of
 * an API enum value (a letter, then letters and digits); anything else (empty, spaces, quotes,
 * control characters) no API server version accepts.
 */
export function validateTrafficDistribution(value: unknown, errs: FieldError[]): void {
  if (isAbsent(value)) return;
  const path = new FieldPath('spec.trafficDistribution');
  const text = optionalString(value, path, errs);
  if (text === undefined) return;
  if ((TRAFFIC_DISTRIBUTIONS as readonly string[]).includes(text)) return;
  if (/^[A-Za-z][A-Za-z0-9]{0,62}$/.test(text)) return;
  checkOneOf(text, TRAFFIC_DISTRIBUTIONS, path, errs);
}
