/**
 * Node ports: a service port's capture in nat KUBE-NODEPORTS (with the nfacct-counted localhost
 * variant) and its no-endpoints verdict in filter KUBE-EXTERNAL-SERVICES, its health-check node
 * port in filter KUBE-NODEPORTS, and the one jump from nat KUBE-SERVICES to KUBE-NODEPORTS on the
 * addresses the NodePortAddressPlan selects. Decisions are core's plans; this only writes text.
 */
import type { NodePortAddressPlan, ServicePortPlan } from '@kube-proxy/core';
import type { ServiceChainNames } from './chain-names.js';
import { KUBE_CHAINS, NFACCT_COUNTERS } from './constants.js';
import type { LineSink } from './line-buffer.js';
import type { ServiceWriteContext } from './service-write-context.js';
import { verdictComment, verdictTarget } from './service-write-context.js';

const SERVICES = KUBE_CHAINS.SERVICES;
const EXTERNAL_SERVICES = KUBE_CHAINS.EXTERNAL_SERVICES;
const NODEPORTS = KUBE_CHAINS.NODEPORTS;

const NODEPORTS_COMMENT = '"kubernetes service nodeports; NOTE: this must be the last rule in this chain"';

export function writeNodePort(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames, proto: string): void {
  const nodePort = plan.nodePort;
  if (nodePort === 0) return;
  const n = chains.comment;
  if (plan.externalAccepted) {
    const ext = chains.ext;
    if (w.localhostNodePortsNfacct) {
      w.nNodePorts.write(
        `-A ${NODEPORTS} -m comment --comment ${n} ${proto} -d 127.0.0.0/8 --dport ${nodePort} -m nfacct --nfacct-name ${NFACCT_COUNTERS.LOCALHOST_NODEPORT_ACCEPTED} -j ${ext}`,
      );
    }
    w.nNodePorts.write(`-A ${NODEPORTS} -m comment --comment ${n} ${proto} --dport ${nodePort} -j ${ext}`);
  }
  if (!plan.externalReachable) {
    const verdict = plan.externalVerdict;
    w.fExternal.write(
      `-A ${EXTERNAL_SERVICES} -m comment --comment ${verdictComment(n, verdict)} -m addrtype --dst-type LOCAL ${proto} --dport ${nodePort} -j ${verdictTarget(verdict)}`,
    );
  }
}

export function writeHealthCheckNodePort(w: ServiceWriteContext, plan: ServicePortPlan, chains: ServiceChainNames): void {
  const port = plan.healthCheckNodePort;
  if (port === 0) return;
  w.fNodePorts.write(`-A ${NODEPORTS} -m comment --comment "${chains.comment} health check node port" -m tcp -p tcp --dport ${port} -j ACCEPT`);
}

/** The tail call from nat KUBE-SERVICES to KUBE-NODEPORTS; must follow every other service rule. */
export function writeNodePortsJump(nServices: LineSink, plan: NodePortAddressPlan, isIPv6: boolean): void {
  if (plan.allLocalAddresses) {
    let destinations = '-m addrtype --dst-type LOCAL';
    if (plan.excludeLoopback) destinations += isIPv6 ? ' ! -d ::1/128' : ' ! -d 127.0.0.0/8';
    nServices.write(`-A ${SERVICES} -m comment --comment ${NODEPORTS_COMMENT} ${destinations} -j ${NODEPORTS}`);
    return;
  }
  const addresses = plan.addresses;
  for (let i = 0; i < addresses.length; i++) {
    nServices.write(`-A ${SERVICES} -m comment --comment ${NODEPORTS_COMMENT} -d ${addresses[i]} -j ${NODEPORTS}`);
  }
}
