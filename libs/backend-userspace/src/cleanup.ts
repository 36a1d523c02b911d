import type { CommandExecutor, Logger } from '@kube-proxy/core';
import { cleanupIptablesLeftoversInEveryVariant, type JumpRule, type OwnedChain } from '@kube-proxy/netfilter-iptables';

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
 * OUTPUT, then flush and delete them, with every iptables variant and family the host has (one
 * iptables-save and at most one iptables-restore per table, as the IPVS cleanup: the old proxy may
 * have written with either variant). Absence is never an error. Returns true if an error was
 * encountered (logged).
 */
export async function cleanupUserspace(executor: CommandExecutor, logger: Logger): Promise<boolean> {
  return cleanupIptablesLeftoversInEveryVariant(executor, logger, USERSPACE_JUMPS, USERSPACE_CHAINS);
}
