import { parseCIDR } from '@kube-proxy/core';

/** What a ServiceCIDR object contributes, or why it contributes nothing. */
export type ServiceCIDRReading = { readonly ok: true; readonly name: string; readonly cidrs: readonly string[] } | { readonly ok: false; readonly error: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads spec.cidrs of a networking.k8s.io/v1 ServiceCIDR as the API server validates it: one or two
 * CIDRs, at most one per family, each in canonical form (network address, no leading zeros). Anything
 * else the API server would have refused, so the object is not trusted for any of its CIDRs.
 */
export function readServiceCIDR(obj: unknown): ServiceCIDRReading {
  const md = isRecord(obj) ? obj['metadata'] : undefined;
  const name = isRecord(md) && typeof md['name'] === 'string' ? md['name'] : '';
  if (name === '') return { ok: false, error: 'metadata.name is missing' };
  const spec = isRecord(obj) ? obj['spec'] : undefined;
  const cidrs = isRecord(spec) ? spec['cidrs'] : undefined;
  if (!Array.isArray(cidrs)) return { ok: false, error: 'spec.cidrs must be a list of CIDRs' };
  if (cidrs.length === 0 || cidrs.length > 2) return { ok: false, error: `spec.cidrs must have one or two entries, has ${cidrs.length}` };
  const families = new Set<string>();
  for (const [i, entry] of cidrs.entries()) {
    const parsed = typeof entry === 'string' ? parseCIDR(entry) : undefined;
    if (parsed === undefined) return { ok: false, error: `spec.cidrs[${i}]: ${JSON.stringify(entry)} is not a valid CIDR` };
    if (parsed.text !== entry) return { ok: false, error: `spec.cidrs[${i}]: ${JSON.stringify(entry)} is not in canonical form (${parsed.text})` };
    if (families.has(parsed.family)) return { ok: false, error: `spec.cidrs: at most one CIDR per IP family` };
    families.add(parsed.family);
  }
  return { ok: true, name, cidrs: cidrs as string[] };
}
