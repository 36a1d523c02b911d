import type { V1Service } from '@kubernetes/client-node';
import { FieldPath, type FieldError } from './field-error.js';
import { checkFormat, checkOneOf, optionalString } from './field-checks.js';
import { guarded } from './guarded.js';
import { isAbsent, isRecord, jsonType } from './json-shape.js';
import { isDNS1035Label, isDNS1123Subdomain } from './name-rules.js';
import { validateLabels, validateObjectMeta } from './object-meta.js';
import { readClusterIPs, validateClusterIPs } from './service-cluster-ips.js';
import { validateServiceExternal } from './service-load-balancer.js';
import { validateServicePorts } from './service-ports.js';
import { validateServiceTraffic } from './service-traffic.js';

export const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] as const;

/**
 * Checks a v1 Service the way kube-apiserver's ValidateService does (pkg/apis/core/validation), on the
 * fields kube-proxy consumes, so that an object the API server would have refused never reaches the
 * model or a renderer. Unset fields are read with the API's defaults (type ClusterIP, protocol TCP,
 * sessionAffinity None, …) because hand-written manifests are validated as the API server would
 * validate them after defaulting. Every field's own format, enum and range is checked, and the rules
 * across fields that decide what the proxy programs (port names required and unique with several
 * ports, duplicate ports, node ports only off ClusterIP, cluster IPs matching ipFamilies, at most one
 * per family). Upstream's rules about fields set where they have no effect (a Service without ports,
 * ExternalName with cluster IPs, LoadBalancer fields on other types, …) are not applied: the proxy
 * ignores those fields, so refusing the object would only be stricter than needed.
 * Returns [] for a valid Service; never throws, whatever the input.
 */
export function validateService(svc: V1Service): readonly FieldError[] {
  return guarded(() => serviceErrors(svc as unknown));
}

function serviceErrors(svc: unknown): FieldError[] {
  if (!isRecord(svc)) return [{ field: '<object>', message: `must be an object, got ${jsonType(svc)}` }];
  const errs = validateObjectMeta(svc['metadata'], { namespaced: true, name: isDNS1035Label });

  const specPath = new FieldPath('spec');
  const rawSpec = svc['spec'];
  if (!isAbsent(rawSpec) && !isRecord(rawSpec)) {
    errs.push(specPath.error(`must be an object, got ${jsonType(rawSpec)}`));
    return errs;
  }
  const spec: Record<string, unknown> = isRecord(rawSpec) ? rawSpec : {};

  const typePath = specPath.at('type');
  const typeText = optionalString(spec['type'], typePath, errs);
  const type = typeText === '' ? 'ClusterIP' : typeText;
  if (type === undefined || !checkOneOf(type, SERVICE_TYPES, typePath, errs)) return errs;

  const clusterIPs = readClusterIPs(spec, errs);
  if (type === 'ExternalName') {
    const namePath = specPath.at('externalName');
    const externalName = optionalString(spec['externalName'], namePath, errs);
    // The value is a CNAME and may end in a dot.
    const cname = externalName?.endsWith('.') ? externalName.slice(0, -1) : externalName;
    if (cname === '') errs.push(namePath.error('Required value'));
    else if (cname !== undefined) checkFormat(cname, isDNS1123Subdomain, namePath, errs);
  }

  validateServicePorts(spec['ports'], type, errs);
  errs.push(...validateLabels(spec['selector'], specPath.at('selector')));
  validateServiceTraffic(spec, errs);
  if (type !== 'ExternalName') validateClusterIPs(spec, clusterIPs, errs);
  validateServiceExternal(svc, spec, errs);
  return errs;
}
