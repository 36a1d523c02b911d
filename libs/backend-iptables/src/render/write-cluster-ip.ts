/**
 * The cluster IP of a service port (internal traffic class): its capture in nat KUBE-SERVICES, or
 * the plan's no-endpoints verdict in filter KUBE-SERVICES, and the masquerade rule at the head of
 * the internal policy chain. Decisions are the plan's; this only writes upstream's rule texts.
 */
import type { ServicePortPlan } from '@kube-proxy/core';
import type { ServiceChainNames } from './chain-names.js';
import { KUBE_CHAINS } from './constants.js';
import type { ServiceWriteContext } from './service-write-context.js';
import { verdictComment, verdictTarget } from './service-write-context.js';

const SERVICES = KUBE_CHAINS.SERVICES;
const MARK_MASQ = KUBE_CHAINS.MARK_MASQ;

/** The chain internal traffic jumps to: SVL for Local policy, else SVC. */
export function internalPolicyChain(plan: ServicePortPlan, chains: ServiceChainNames): string {
  return plan.internalEndpoints === 'local' ? chains.svl : chains.svc;
}

export function writeClusterIPCapture(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames, proto: string): void {
  const n = chains.comment;
  const port = plan.service.port;
  if (plan.internalReachable) {
    w.nServices.write(
      `-A ${SERVICES} -m comment --comment "${n} cluster IP" ${proto} -d ${plan.clusterIP} --dport ${port} -j ${internalPolicyChain(plan, chains)}`,
    );
  } else {
    const verdict = plan.internalVerdict;
    w.fServices.write(
      `-A ${SERVICES} -m comment --comment ${verdictComment(n, verdict)} ${proto} -d ${plan.clusterIP} --dport ${port} -j ${verdictTarget(verdict)}`,
    );
  }
}

/** The masquerade rule for cluster IP traffic (written into the internal policy chain; counted only when `emit` is false). */
export function writeClusterIPMasquerade(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames, proto: string, emit: boolean): void {
  const mode = plan.internalMasquerade;
  if (mode === 'none') return;
  if (!emit) {
    w.skippedNatRules++;
    return;
  }
  const head = `-A ${internalPolicyChain(plan, chains)} -m comment --comment "${chains.comment} cluster IP" ${proto} -d ${plan.clusterIP} --dport ${plan.service.port}`;
  // 'off-cluster': masquerade what the local-traffic detector says did not come from a pod.
  w.natRules.write(mode === 'all' ? `${head} -j ${MARK_MASQ}` : `${head} ${w.detector.ifNotLocalText} -j ${MARK_MASQ}`);
}
