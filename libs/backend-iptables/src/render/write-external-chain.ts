/**
 * The EXT chain of a service port: where all external traffic (external IPs, accepted LB traffic,
 * node ports) is masqueraded as the plan says and sent on to the external policy chain. With
 * 'local-sources' (Local policy) pod traffic (when detectable) and this node's own traffic
 * short-circuit to the cluster chain, the node's own traffic masqueraded.
 */
import type { ServicePortPlan } from '@kube-proxy/core';
import type { ServiceChainNames } from './chain-names.js';
import { KUBE_CHAINS, makeChainLine } from './constants.js';
import type { ServiceWriteContext } from './service-write-context.js';

const MARK_MASQ = KUBE_CHAINS.MARK_MASQ;

export function writeExternalChain(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames, emit: boolean): void {
  const mode = plan.externalMasquerade;
  if (mode === 'none') return;
  const ext = chains.ext;
  w.activeNatChains.add(ext);
  if (!emit) {
    w.skippedNatChains++;
    w.skippedNatRules += (mode === 'all' ? 1 : plan.podsBypassExternalPolicy ? 3 : 2) + (plan.externalReachable ? 1 : 0);
    return;
  }
  const n = chains.comment;
  w.natChains.write(makeChainLine(ext));
  if (mode === 'all') {
    w.natRules.write(`-A ${ext} -m comment --comment "masquerade traffic for ${n} external destinations" -j ${MARK_MASQ}`);
  } else {
    const clusterChain = chains.svc;
    if (plan.podsBypassExternalPolicy) {
      w.natRules.write(
        `-A ${ext} -m comment --comment "pod traffic for ${n} external destinations" ${w.detector.ifLocalText} -j ${clusterChain}`,
      );
    }
    w.natRules.write(`-A ${ext} -m comment --comment "masquerade LOCAL traffic for ${n} external destinations" -m addrtype --src-type LOCAL -j ${MARK_MASQ}`);
    w.natRules.write(`-A ${ext} -m comment --comment "route LOCAL traffic for ${n} external destinations" -m addrtype --src-type LOCAL -j ${clusterChain}`);
  }
  if (plan.externalReachable) {
    w.natRules.write(`-A ${ext} -j ${plan.externalEndpoints === 'local' ? chains.svl : chains.svc}`);
  }
}
