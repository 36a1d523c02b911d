import type { V1Node } from '@kubernetes/client-node';
import { parseCIDR } from '../model/ip.js';
import { FieldPath, type FieldError } from './field-error.js';
import { checkCIDR, optionalArray, optionalRecord, optionalString, stringList } from './field-checks.js';
import { guarded } from './guarded.js';
import { isRecord, jsonType } from './json-shape.js';
import { isDNS1123Subdomain } from './name-rules.js';
import { validateObjectMeta } from './object-meta.js';

/**
 * Checks a v1 Node the way kube-apiserver's ValidateNode does, on what kube-proxy reads from its own
 * Node: the name (a DNS subdomain), labels (the zone label steers topology), spec.podCIDR and
 * spec.podCIDRs (valid CIDRs, at most one per family: they become local-traffic rules), and the shape
 * of status.addresses (type and address strings). The API server does not check the text of node
 * addresses, and neither does this: the proxy only takes InternalIP/ExternalIP entries that parse as
 * IPs. Returns [] for a valid Node; never throws.
 */
export function validateNode(node: V1Node): readonly FieldError[] {
  return guarded(() => nodeErrors(node as unknown));
}

function nodeErrors(node: unknown): FieldError[] {
  if (!isRecord(node)) return [{ field: '<object>', message: `must be an object, got ${jsonType(node)}` }];
  const errs = validateObjectMeta(node['metadata'], { namespaced: false, name: isDNS1123Subdomain });

  const spec = optionalRecord(node['spec'], new FieldPath('spec'), errs);
  if (spec !== undefined) {
    const podCIDRPath = new FieldPath('spec.podCIDR');
    const podCIDR = optionalString(spec['podCIDR'], podCIDRPath, errs);
    if (podCIDR) checkCIDR(podCIDR, podCIDRPath, errs);
    const listPath = new FieldPath('spec.podCIDRs');
    const cidrs = stringList(spec['podCIDRs'], listPath, errs) ?? [];
    const valid = cidrs.map((c, i) => checkCIDR(c, listPath.index(i), errs)).every(Boolean);
    if (valid && cidrs.length > 1) {
      const families = new Set(cidrs.map((c) => parseCIDR(c)?.family));
      if (cidrs.length > 2 || families.size !== 2) {
        errs.push(listPath.error('Invalid value: may specify no more than one CIDR for each IP family'));
      }
    }
  }

  const status = optionalRecord(node['status'], new FieldPath('status'), errs);
  const addrPath = new FieldPath('status.addresses');
  const addresses = optionalArray(status?.['addresses'], addrPath, errs) ?? [];
  addresses.forEach((raw, i) => {
    const at = addrPath.index(i);
    if (!isRecord(raw)) {
      errs.push(at.error(`must be an object, got ${jsonType(raw)}`));
      return;
    }
    optionalString(raw['type'], at.at('type'), errs);
    optionalString(raw['address'], at.at('address'), errs);
  });
  return errs;
}
