/*
 * Why an endpoint of a Service port is not in the set a traffic class reaches. The set itself comes
 * from planServicePort (categorizeEndpoints); this only names, for each endpoint left out, the first
 * rule of categorizeEndpoints that left it out, so the reason always agrees with the set.
 */
import type { Endpoint } from '../model/endpoint.js';
import type { EndpointSetKind } from '../plan/service-port-plan.js';
import type { TopologyMode } from '../topology/categorize-endpoints.js';
import { traceWords } from '../trace/trace-words.js';
import type { EndpointFacts, ExcludedEndpoint, ExclusionReason } from './service-explanation.js';
import type { PortlessEndpoint } from './service-endpoints.js';

/** What the reasons depend on besides the endpoint. */
export interface ExclusionContext {
  readonly kind: EndpointSetKind;
  /** `internalTrafficPolicy` or `externalTrafficPolicy`, for the words. */
  readonly policyField: string;
  readonly topology: TopologyMode;
  readonly nodeName: string;
  readonly zone: string;
  readonly servicePort: string;
}

export function endpointFacts(ep: Endpoint): EndpointFacts {
  return {
    endpoint: ep.key,
    ip: ep.ip,
    port: ep.port,
    nodeName: ep.nodeName,
    zone: ep.zone,
    ready: ep.ready,
    serving: ep.serving,
    terminating: ep.terminating,
    local: ep.isLocal,
    zoneHints: ep.zoneHints === null ? [] : [...ep.zoneHints].sort(),
    nodeHints: ep.nodeHints === null ? [] : [...ep.nodeHints].sort(),
  };
}

/** Not usable by condition alone: not ready, or terminating (serving or not). */
function conditionReason(ep: Endpoint): ExclusionReason {
  if (ep.terminating) return ep.serving ? 'terminating' : 'not-serving';
  return 'not-ready';
}

function reasonOf(ep: Endpoint, ctx: ExclusionContext): ExclusionReason {
  if (ctx.kind === 'local' && !ep.isLocal) return 'other-node';
  if (!ep.ready) return conditionReason(ep);
  // A ready endpoint is only left out of the cluster set by topology.
  return ctx.topology === 'PreferSameNode' ? 'topology-node' : 'topology-zone';
}

function detailOf(reason: ExclusionReason, ep: Endpoint, ctx: ExclusionContext): string {
  switch (reason) {
    case 'not-ready':
      return traceWords.endpointNotReady;
    case 'not-serving':
      return traceWords.endpointNotServing;
    case 'terminating':
      return traceWords.endpointTerminating;
    case 'other-node':
      return traceWords.endpointOtherNode(ep.nodeName, ctx.policyField);
    case 'topology-zone':
      return traceWords.endpointOtherZone(ctx.zone);
    case 'topology-node':
      return traceWords.endpointOtherNodeHint(ctx.nodeName);
    case 'port-mismatch':
      return '';
  }
}

/** Every endpoint of `all` not in `reached`, with its reason, then the slice endpoints with no matching port. */
export function excludedEndpoints(
  all: readonly Endpoint[],
  reached: ReadonlySet<string>,
  portless: readonly PortlessEndpoint[],
  ctx: ExclusionContext,
): ExcludedEndpoint[] {
  const out: ExcludedEndpoint[] = [];
  for (const ep of all) {
    if (reached.has(ep.key)) continue;
    const reason = reasonOf(ep, ctx);
    out.push({ ...endpointFacts(ep), reason, detail: detailOf(reason, ep, ctx) });
  }
  for (const { endpoint: ep, slicePorts } of portless) {
    out.push({
      endpoint: ep.ip,
      ip: ep.ip,
      port: 0,
      nodeName: ep.nodeName,
      zone: ep.zone,
      ready: ep.ready,
      serving: ep.serving,
      terminating: ep.terminating,
      local: ep.nodeName !== '' && ep.nodeName === ctx.nodeName,
      zoneHints: ep.zoneHints === null ? [] : [...ep.zoneHints].sort(),
      nodeHints: ep.nodeHints === null ? [] : [...ep.nodeHints].sort(),
      reason: 'port-mismatch',
      detail: traceWords.endpointPortMismatch(ctx.servicePort, slicePorts),
    });
  }
  return out.sort((a, b) => (a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0));
}
