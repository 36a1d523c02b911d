/**
 * The load-balancer IPs of a service port and their source-range firewall: the capture in nat
 * KUBE-SERVICES (through the FW chain when the plan is firewalled, else straight to EXT), the
 * filter KUBE-PROXY-FIREWALL drop of what the FW chain did not accept, the no-endpoints verdicts,
 * and the FW chain itself. Decisions are the plan's; this only writes upstream's rule texts.
 */
import type { ServicePortPlan } from '@kube-proxy/core';
import type { ServiceChainNames } from './chain-names.js';
import { KUBE_CHAINS, makeChainLine } from './constants.js';
import type { ServiceWriteContext } from './service-write-context.js';
import { verdictComment, verdictTarget } from './service-write-context.js';

const SERVICES = KUBE_CHAINS.SERVICES;
const EXTERNAL_SERVICES = KUBE_CHAINS.EXTERNAL_SERVICES;
const PROXY_FIREWALL = KUBE_CHAINS.PROXY_FIREWALL;

export function writeLoadBalancerIPs(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames, proto: string): void {
  const lbIPs = plan.loadBalancerIPs;
  if (lbIPs.length === 0) return;
  const n = chains.comment;
  const port = plan.service.port;
  const fwChain = chains.fw;
  const target = plan.firewalled ? fwChain : chains.ext;
  for (let i = 0; i < lbIPs.length; i++) {
    const lbip = lbIPs[i];
    if (plan.externalAccepted) {
      w.nServices.write(`-A ${SERVICES} -m comment --comment "${n} loadbalancer IP" ${proto} -d ${lbip} --dport ${port} -j ${target}`);
    }
    if (plan.firewalled) {
      w.fProxyFirewall.write(
        `-A ${PROXY_FIREWALL} -m comment --comment "${n} traffic not accepted by ${fwChain}" ${proto} -d ${lbip} --dport ${port} -j DROP`,
      );
    }
  }
  if (!plan.externalReachable) {
    const verdict = plan.externalVerdict;
    for (let i = 0; i < lbIPs.length; i++) {
      w.fExternal.write(
        `-A ${EXTERNAL_SERVICES} -m comment --comment ${verdictComment(n, verdict)} ${proto} -d ${lbIPs[i]} --dport ${port} -j ${verdictTarget(verdict)}`,
      );
    }
  }
}

/** The FW chain: accepted source ranges (and the LB IPs as sources when the node is in range) go on to EXT. */
export function writeFirewallChain(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames, emit: boolean): void {
  if (!plan.firewalled) return;
  const fwChain = chains.fw;
  w.activeNatChains.add(fwChain);
  const ranges = plan.firewallSourceRanges;
  const lbIPs = plan.loadBalancerIPs;
  const allowLB = plan.firewallAllowsLoadBalancerIPs;
  if (!emit) {
    w.skippedNatChains++;
    w.skippedNatRules += ranges.length + (allowLB ? lbIPs.length : 0) + 1;
    return;
  }
  const n = chains.comment;
  const ext = chains.ext;
  w.natChains.write(makeChainLine(fwChain));
  const fwArgs = `-A ${fwChain} -m comment --comment "${n} loadbalancer IP"`;
  for (let i = 0; i < ranges.length; i++) w.natRules.write(`${fwArgs} -s ${ranges[i]} -j ${ext}`);
  if (allowLB) {
    for (let i = 0; i < lbIPs.length; i++) w.natRules.write(`${fwArgs} -s ${lbIPs[i]} -j ${ext}`);
  }
  // Anything reaching the end of the chain was not DNATed: KUBE-PROXY-FIREWALL drops it.
  w.natRules.write(`-A ${fwChain} -m comment --comment "other traffic to ${n} will be dropped by KUBE-PROXY-FIREWALL"`);
}
