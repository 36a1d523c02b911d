/**
 * The per-service part of a render: for each service port, core's plan handed to the writers, in
 * upstream's order. The hot loop at scale (10,000 services), so it allocates nothing per service
 * beyond the plan and the protocol match text: every writer gets the one ServiceWriteContext.
 */
import type { Endpoint, EndpointsMap, ServicePlanContext, ServicePort } from '@kube-proxy/core';
import { planServicePort } from '@kube-proxy/core';
import type { ServiceChainNames } from './chain-names.js';
import { lowerProtocol } from './chain-names.js';
import { checkServiceOnce } from './render-guards.js';
import type { ServiceWriteContext } from './service-write-context.js';
import { writeClusterIPCapture, writeClusterIPMasquerade } from './write-cluster-ip.js';
import { writeEndpointChains, writePolicyChains } from './write-endpoints.js';
import { writeExternalChain } from './write-external-chain.js';
import { writeExternalIPs } from './write-external-ips.js';
import { writeFirewallChain, writeLoadBalancerIPs } from './write-load-balancer.js';
import { writeHealthCheckNodePort, writeNodePort } from './write-node-port.js';

const EMPTY_ENDPOINTS: readonly Endpoint[] = [];

/** Service ports with a Local policy and no local endpoint, per traffic class (sync_proxy_rules_no_local_endpoints_total). */
export interface NoLocalEndpoints {
  internal: number;
  external: number;
}

/**
 * Writes every service port's rules: the top-level captures always, its own chains only when
 * `changedServices` is null (full sync) or names its service (a partial sync counts the others).
 * `services` must already be in the payload's order (sorted: README, service order).
 */
export function writeServicePorts(
  w: ServiceWriteContext,
  services: ReadonlyArray<readonly [string, ServicePort]>,
  endpointsMap: EndpointsMap,
  changedServices: ReadonlySet<string> | null,
  planContext: ServicePlanContext,
): NoLocalEndpoints {
  const noLocal: NoLocalEndpoints = { internal: 0, external: 0 };
  const names = w.names;
  for (let si = 0; si < services.length; si++) {
    const [svcKey, svc] = services[si];
    const protocol = lowerProtocol(svc.protocol);
    const chains: ServiceChainNames = names.service(svc.name.key, svc.protocol);
    // Names reach comments only as comment-safe text; every other value must be canonical (README, hostile input).
    checkServiceOnce(names, chains, svc);

    const plan = planServicePort(svc, endpointsMap.get(svcKey) ?? EMPTY_ENDPOINTS, planContext);
    // 'drop' is the verdict of a Local policy with no local endpoint (the metric's meaning).
    if (plan.internalVerdict === 'drop') noLocal.internal++;
    if (plan.externalVerdict === 'drop') noLocal.external++;

    const proto = `-m ${protocol} -p ${protocol}`;

    // Top-level chains: captures and verdicts of every address the port answers on.
    writeClusterIPCapture(w, plan, chains, proto);
    writeExternalIPs(w, plan, chains, proto);
    writeLoadBalancerIPs(w, plan, chains, proto);
    writeNodePort(w, plan, chains, proto);
    writeHealthCheckNodePort(w, plan, chains);

    // Partial sync: unchanged services keep their SVC/SVL/EXT/FW/SEP chains. Upstream still
    // "writes" them to discarding buffers (for the metrics); we only count the lines.
    const emit = changedServices === null || changedServices.has(`${svc.name.namespace}/${svc.name.name}`);

    // Per-service chains, in upstream's order.
    writeClusterIPMasquerade(w, plan, chains, proto, emit);
    writeExternalChain(w, plan, chains, emit);
    writeFirewallChain(w, plan, chains, emit);
    writePolicyChains(w, plan, chains, emit);
    writeEndpointChains(w, plan, chains, proto, emit);
  }
  return noLocal;
}
