import { validateService, type V1Service } from '@kube-proxy/core';
import { HEADLESS_LABEL, SERVICE_PROXY_NAME_LABEL } from '../object-filter.js';
import type { ClassifiedObject } from './object-key.js';
import type { ManifestObject } from './parse-manifests.js';

/** Why the proxy makes no rules for a manifest object, and what would change that (absent when nothing should). */
export interface SkipReason {
  /** warn: most likely a mistake in hand-written YAML; info: skipped as upstream skips it. */
  readonly level: 'warn' | 'info';
  readonly reason: string;
  readonly fix?: string;
  /** The object is served, but without some rules the same object from an API server would get. */
  readonly partial?: boolean;
  /** Set for objects of kinds the proxy never reads, for the per-load summary. */
  readonly ignoredKind?: string;
}

export interface SkipContext {
  readonly nodeName: string;
  readonly serviceProxyName: string;
}

export const READ_KINDS = 'Service, EndpointSlice, Node, ServiceCIDR';

/**
 * Every reason the manifest source, or the Provider after it, silently makes no rules for an object
 * that an API-server user would never see (the server allocates cluster IPs, the informers' selectors
 * filter the rest). Objects that fail classification or validation get undefined: those paths warn
 * already, and one object gets one line.
 */
export function skipReason(obj: ManifestObject, c: ClassifiedObject, ctx: SkipContext): SkipReason | undefined {
  if (!c.ok) {
    if (!c.ignored) return undefined;
    const kind = String(obj.kind);
    return { level: 'info', reason: `ignored kind ${kind}: the proxy reads ${READ_KINDS}`, ignoredKind: kind };
  }
  if (c.kind === 'ServiceCIDR') return undefined;
  if (c.kind === 'Node') {
    const name = c.object.metadata?.name;
    if (name === ctx.nodeName) return undefined;
    return {
      level: 'info',
      reason: `not this node (this node is ${JSON.stringify(ctx.nodeName)}): only the proxy's own Node is read`,
      fix: `name it ${JSON.stringify(ctx.nodeName)}, or start the proxy with --hostname-override=${String(name)}`,
    };
  }
  const labelled = labelReason(c.object.metadata?.labels, ctx.serviceProxyName);
  if (labelled) return labelled;
  return c.kind === 'Service' ? serviceReason(c.object as unknown as V1Service) : undefined;
}

/** The informers' label selector (see isServedByThisProxy), one reason per label it tests. */
function labelReason(raw: unknown, serviceProxyName: string): SkipReason | undefined {
  const labels = (raw ?? {}) as Record<string, unknown>;
  if (HEADLESS_LABEL in labels) {
    return { level: 'info', reason: `labelled ${HEADLESS_LABEL}: no rules, as upstream's informers filter it out` };
  }
  const owner = labels[SERVICE_PROXY_NAME_LABEL];
  if (serviceProxyName === '') {
    if (owner === undefined) return undefined;
    return {
      level: 'info',
      reason: `labelled ${SERVICE_PROXY_NAME_LABEL}=${String(owner)}: served by another proxy, as upstream`,
      fix: `remove the label, or start this proxy with --service-proxy-name=${String(owner)}`,
    };
  }
  if (owner === serviceProxyName) return undefined;
  return {
    level: 'info',
    reason:
      owner === undefined
        ? `not labelled ${SERVICE_PROXY_NAME_LABEL}=${serviceProxyName} (--service-proxy-name)`
        : `labelled ${SERVICE_PROXY_NAME_LABEL}=${String(owner)}, not ${serviceProxyName} (--service-proxy-name)`,
    fix: `label it ${SERVICE_PROXY_NAME_LABEL}=${serviceProxyName}`,
  };
}

/**
 * Upstream's ShouldSkipService: spec.clusterIP "" or "None", then type ExternalName. An ExternalName
 * Service normally has no clusterIP either, so its type is named first: that is the reason a user can
 * act on. spec.clusterIPs alone is not enough, because upstream reads spec.clusterIP, which the API
 * server fills in and hand-written YAML may not.
 */
function serviceReason(svc: V1Service): SkipReason | undefined {
  if (validateService(svc).length > 0) return undefined;
  const spec = svc.spec ?? {};
  if (spec.type === 'ExternalName') {
    return { level: 'info', reason: 'type ExternalName: no rules, as upstream (DNS answers for it)' };
  }
  const clusterIP = spec.clusterIP ?? '';
  if (clusterIP === 'None') return { level: 'info', reason: 'headless (spec.clusterIP None): no rules, as upstream' };
  const missingNodePorts = portsWithoutNodePort(svc);
  if (clusterIP !== '') {
    if (missingNodePorts.length === 0) return undefined;
    return {
      level: 'warn',
      partial: true,
      reason: `${missingNodePorts.join(', ')} unset (the API server would allocate it): no node port rule for that port`,
      fix: 'set the nodePort to a port in the node port range (default 30000-32767)',
    };
  }
  const alsoNodePorts = missingNodePorts.length > 0 ? `, and ${missingNodePorts.join(', ')} in the node port range` : '';
  const first = Array.isArray(spec.clusterIPs) ? spec.clusterIPs[0] : undefined;
  if (typeof first === 'string' && first !== '') {
    return {
      level: 'warn',
      reason: 'spec.clusterIPs without spec.clusterIP: the proxy reads spec.clusterIP, which the API server would copy from clusterIPs',
      fix: `set spec.clusterIP: ${first}${alsoNodePorts}`,
    };
  }
  return {
    level: 'warn',
    reason: 'no spec.clusterIP (the API server would assign one; the manifest source does not): no rules',
    fix: `set spec.clusterIP to an address in the service CIDR${alsoNodePorts}`,
  };
}

/** The nodePort fields a NodePort or LoadBalancer Service leaves to the API server to allocate. */
function portsWithoutNodePort(svc: V1Service): string[] {
  const spec = svc.spec ?? {};
  const allocates = spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
  if (!allocates || !Array.isArray(spec.ports)) return [];
  return spec.ports.flatMap((p, i) => (p.nodePort ? [] : [`spec.ports[${i}].nodePort`]));
}
