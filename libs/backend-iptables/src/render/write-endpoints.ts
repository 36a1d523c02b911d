/**
 * Endpoints of a service port: the SVC (cluster) and SVL (local) chains that balance over the
 * plan's endpoint sets, with client-IP affinity, and one SEP chain per reachable endpoint (hairpin
 * masquerade, affinity bookkeeping, DNAT). Upstream's writeServiceToEndpointRules and its SEP loop.
 */
import type { Endpoint, ServicePortPlan } from '@kube-proxy/core';
import type { ServiceChainNames } from './chain-names.js';
import { KUBE_CHAINS, makeChainLine } from './constants.js';
import { probability } from './format.js';
import { checkedEndpointChain } from './render-guards.js';
import type { ServiceWriteContext } from './service-write-context.js';

const MARK_MASQ = KUBE_CHAINS.MARK_MASQ;

/** The SVC and SVL chains the plan balances over. */
export function writePolicyChains(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames, emit: boolean): void {
  const perEndpoint = plan.sessionAffinity ? 2 : 1;
  if (plan.balancesClusterEndpoints) {
    w.activeNatChains.add(chains.svc);
    if (!emit) {
      w.skippedNatChains++;
      w.skippedNatRules += perEndpoint * plan.clusterEndpoints.length;
    } else {
      w.natChains.write(makeChainLine(chains.svc));
      writeServiceToEndpointRules(w, plan, chains, chains.svc, plan.clusterEndpoints);
    }
  }
  if (plan.balancesLocalEndpoints) {
    w.activeNatChains.add(chains.svl);
    if (!emit) {
      w.skippedNatChains++;
      w.skippedNatRules += perEndpoint * plan.localEndpoints.length;
    } else {
      w.natChains.write(makeChainLine(chains.svl));
      writeServiceToEndpointRules(w, plan, chains, chains.svl, plan.localEndpoints);
    }
  }
}

/** Session-affinity and load-balancing rules from a SVC/SVL chain to its endpoints (upstream's writeServiceToEndpointRules). */
function writeServiceToEndpointRules(
  w: ServiceWriteContext,
  plan: ServicePortPlan,
  chains: ServiceChainNames,
  svcChain: string,
  endpoints: readonly Endpoint[],
): void {
  const { names, largeClusterMode, natRules } = w;
  const n = chains.comment;
  const count = endpoints.length;
  if (plan.sessionAffinity) {
    const seconds = plan.affinitySeconds;
    for (let i = 0; i < count; i++) {
      const ep = endpoints[i];
      const sep = names.sepOf(chains, ep.key);
      const head = largeClusterMode ? `-A ${svcChain}` : `-A ${svcChain} -m comment --comment "${n} -> ${ep.key}"`;
      natRules.write(`${head} -m recent --name ${sep} --rcheck --seconds ${seconds} --reap -j ${sep}`);
    }
  }
  for (let i = 0; i < count; i++) {
    const ep = endpoints[i];
    const sep = names.sepOf(chains, ep.key);
    const head = largeClusterMode ? `-A ${svcChain}` : `-A ${svcChain} -m comment --comment "${n} -> ${ep.key}"`;
    if (i < count - 1) {
      natRules.write(`${head} -m statistic --mode random --probability ${probability(count - i)} -j ${sep}`);
    } else {
      natRules.write(`${head} -j ${sep}`);
    }
  }
}

/** One SEP chain per reachable endpoint: hairpin masquerade, then (affinity bookkeeping and) DNAT. */
export function writeEndpointChains(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames, proto: string, emit: boolean): void {
  const reachable = plan.reachableEndpoints;
  const { names, activeNatChains } = w;
  if (!emit) {
    for (let i = 0; i < reachable.length; i++) activeNatChains.add(names.sepOf(chains, reachable[i].key));
    w.skippedNatChains += reachable.length;
    w.skippedNatRules += (plan.masqueradeHairpin ? 2 : 1) * reachable.length;
    return;
  }
  const { natChains, natRules, largeClusterMode } = w;
  const n = chains.comment;
  for (let i = 0; i < reachable.length; i++) {
    const ep = reachable[i];
    // Every endpoint written for this service is one of these: checked before any payload is returned.
    const endpointChain = checkedEndpointChain(names, chains, ep);
    natChains.write(makeChainLine(endpointChain));
    activeNatChains.add(endpointChain);
    const head = largeClusterMode ? `-A ${endpointChain}` : `-A ${endpointChain} -m comment --comment ${n}`;
    // Traffic that loops back to the endpoint it came from is SNATed.
    if (plan.masqueradeHairpin) natRules.write(`${head} -s ${ep.ip} -j ${MARK_MASQ}`);
    natRules.write(
      plan.sessionAffinity
        ? `${head} -m recent --name ${endpointChain} --set ${proto} -j DNAT --to-destination ${ep.key}`
        : `${head} ${proto} -j DNAT --to-destination ${ep.key}`,
    );
  }
}
