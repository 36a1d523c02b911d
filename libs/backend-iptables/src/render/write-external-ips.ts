/**
 * The external IPs of a service port (external traffic class): their capture in nat
 * KUBE-SERVICES towards the EXT chain, and the plan's no-endpoints verdict in filter
 * KUBE-EXTERNAL-SERVICES. Decisions are the plan's; this only writes upstream's rule texts.
 */
import type { ServicePortPlan } from '@kube-proxy/core';
import type { ServiceChainNames } from './chain-names.js';
import { KUBE_CHAINS } from './constants.js';
import type { ServiceWriteContext } from './service-write-context.js';
import { verdictComment, verdictTarget } from './service-write-context.js';

const SERVICES = KUBE_CHAINS.SERVICES;
const EXTERNAL_SERVICES = KUBE_CHAINS.EXTERNAL_SERVICES;

export function writeExternalIPs(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames, proto: string): void {
  const externalIPs = plan.externalIPs;
  if (externalIPs.length === 0) return;
  const n = chains.comment;
  const port = plan.service.port;
  for (let i = 0; i < externalIPs.length; i++) {
    const eip = externalIPs[i];
    if (plan.externalAccepted) {
      w.nServices.write(`-A ${SERVICES} -m comment --comment "${n} external IP" ${proto} -d ${eip} --dport ${port} -j ${chains.ext}`);
    }
    if (!plan.externalReachable) {
      const verdict = plan.externalVerdict;
      w.fExternal.write(
        `-A ${EXTERNAL_SERVICES} -m comment --comment ${verdictComment(n, verdict)} ${proto} -d ${eip} --dport ${port} -j ${verdictTarget(verdict)}`,
      );
    }
  }
}
