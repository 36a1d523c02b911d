import type { CommandExecutor, HostCapabilities, Logger } from '@kube-proxy/core';
import { cleanupChains, type JumpRule, type OwnedChain } from '@kube-proxy/core';

/*
 * Upstream's old userspace proxier (pkg/proxy/userspace, removed in v1.26) captured traffic with
 * these nat chains, jumped to from PREROUTING and OUTPUT with the comments below, and let non-local
 * NodePort traffic in through filter KUBE-NODEPORT-NON-LOCAL.
 */

export const USERSPACE_JUMPS: readonly JumpRule[] = [
  { table: 'nat', from: 'OUTPUT', to: 'KUBE-PORTALS-HOST', comment: 'handle ClusterIPs; NOTE: this must be before the NodePort rules' },
  { table: 'nat', from: 'PREROUTING', to: 'KUBE-PORTALS-CONTAINER', comment: 'handle ClusterIPs; NOTE: this must be before the NodePort rules' },
  {
    table: 'nat',
    from: 'OUTPUT',
    to: 'KUBE-NODEPORT-HOST',
    match: ['-m', 'addrtype', '--dst-type', 'LOCAL'],
    comment: 'handle service NodePorts; NOTE: this must be the last rule in the chain',
  },
  {
    table: 'nat',
    from: 'PREROUTING',
    to: 'KUBE-NODEPORT-CONTAINER',
    match: ['-m', 'addrtype', '--dst-type', 'LOCAL'],
    comment: 'handle service NodePorts; NOTE: this must be the last rule in the chain',
  },
  { table: 'filter', from: 'INPUT', to: 'KUBE-NODEPORT-NON-LOCAL', comment: 'Ensure that non-local NodePort traffic can flow' },
];

export const USERSPACE_CHAINS: readonly OwnedChain[] = [
  { table: 'nat', chain: 'KUBE-PORTALS-CONTAINER' },
  { table: 'nat', chain: 'KUBE-PORTALS-HOST' },
  { table: 'nat', chain: 'KUBE-NODEPORT-CONTAINER' },
  { table: 'nat', chain: 'KUBE-NODEPORT-HOST' },
  { table: 'filter', chain: 'KUBE-NODEPORT-NON-LOCAL' },
];

/**
 * Upstream's userspace CleanupLeftovers: unlink the portal and node-port chains from PREROUTING and
 * OUTPUT, then flush and delete them (iptables and ip6tables, when present). Absence is never an
 * error. Returns true if an error was encountered (logged).
 */
export async function cleanupUserspace(executor: CommandExecutor, host: HostCapabilities, logger: Logger): Promise<boolean> {
  let encounteredError = false;
  for (const [binary, tool] of [
    ['iptables', host.tools.iptables],
    ['ip6tables', host.tools.ip6tables],
  ] as const) {
    if (!tool.present) continue;
    if (await cleanupChains(executor, logger, binary, USERSPACE_JUMPS, USERSPACE_CHAINS)) encounteredError = true;
  }
  return encounteredError;
}
