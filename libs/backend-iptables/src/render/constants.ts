/**
 * Chain names, jump rules and thresholds of upstream kube-proxy's iptables mode
 * (pkg/proxy/iptables/proxier.go, v1.31+), spelled exactly as upstream spells them.
 */

/** iptables tables kube-proxy writes to. */
export type IptablesTable = 'filter' | 'nat' | 'mangle';

/** The "top-level" chains kube-proxy owns (upstream's kube*Chain constants). */
export const KUBE_CHAINS = {
  /** the services chain (filter and nat) */
  SERVICES: 'KUBE-SERVICES',
  /** the external services chain (filter) */
  EXTERNAL_SERVICES: 'KUBE-EXTERNAL-SERVICES',
  /** the nodeports chain (filter and nat) */
  NODEPORTS: 'KUBE-NODEPORTS',
  /** the kubernetes postrouting chain (nat) */
  POSTROUTING: 'KUBE-POSTROUTING',
  /** the mark-for-masquerade chain (nat) */
  MARK_MASQ: 'KUBE-MARK-MASQ',
  /** the kubernetes forward chain (filter) */
  FORWARD: 'KUBE-FORWARD',
  /** the kube-proxy firewall chain (filter) */
  PROXY_FIREWALL: 'KUBE-PROXY-FIREWALL',
  /** kubelet's firewall chain, duplicated by kube-proxy (filter; anti-martian rule only) */
  KUBELET_FIREWALL: 'KUBE-FIREWALL',
} as const;

export type KubeChain = (typeof KUBE_CHAINS)[keyof typeof KUBE_CHAINS];

/** The canary chain used to detect that someone flushed our tables (upstream's kubeProxyCanaryChain). */
export const KUBE_PROXY_CANARY_CHAIN = 'KUBE-PROXY-CANARY';

/** Tables the canary chain is created in and monitored (upstream's ipt.Monitor call). */
export const CANARY_TABLES: readonly IptablesTable[] = ['mangle', 'nat', 'filter'];

/**
 * Number of endpoints (over all services, counted as upstream does) above which upstream
 * switches to "large cluster mode": no comments in KUBE-SEP rules / KUBE-SVC→SEP rules, and
 * stale chains are only cleaned up once per syncPeriod.
 */
export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

/** Prefixes of per-service chains (upstream's *ChainNamePrefix constants). */
export const SERVICE_CHAIN_PREFIX = {
  SVC: 'KUBE-SVC-',
  SVL: 'KUBE-SVL-',
  FW: 'KUBE-FW-',
  EXT: 'KUBE-EXT-',
  SEP: 'KUBE-SEP-',
} as const;

/** True if `chain` is a per-service chain kube-proxy owns (upstream's isServiceChainName). */
export function isServiceChainName(chain: string): boolean {
  // All prefixes start with "KUBE-"; check the rest by hand to avoid 5 startsWith calls per chain.
  if (!chain.startsWith('KUBE-')) return false;
  return (
    chain.startsWith('SVC-', 5) ||
    chain.startsWith('SVL-', 5) ||
    chain.startsWith('SEP-', 5) ||
    chain.startsWith('FW-', 5) ||
    chain.startsWith('EXT-', 5)
  );
}

/** Names of the nfacct counters upstream matches on (pkg/proxy/metrics). */
export const NFACCT_COUNTERS = {
  /** kubeproxy_iptables_ct_state_invalid_dropped_packets_total */
  CT_STATE_INVALID_DROPPED: 'ct_state_invalid_dropped_pkts',
  /** kubeproxy_iptables_localhost_nodeports_accepted_packets_total */
  LOCALHOST_NODEPORT_ACCEPTED: 'localhost_nps_accepted_pkts',
} as const;

/** One jump rule from a built-in chain into one of ours (upstream's iptablesJumpChain). */
export interface JumpChain {
  readonly table: IptablesTable;
  /** The chain jumped to (ensured with EnsureChain). */
  readonly dstChain: string;
  /** The built-in chain the jump rule is prepended to. */
  readonly srcChain: 'INPUT' | 'FORWARD' | 'OUTPUT' | 'PREROUTING' | 'POSTROUTING';
  /** Comment, "" for none. */
  readonly comment: string;
  /** Arguments written before the comment. */
  readonly extraArgs: readonly string[];
}

const CT_NEW: readonly string[] = ['-m', 'conntrack', '--ctstate', 'NEW'];
const NONE: readonly string[] = [];

/**
 * The jump rules upstream ensures (EnsureChain + EnsureRule(Prepend, ...)) on every full sync,
 * in upstream's order (iptablesJumpChains).
 */
export const JUMP_CHAINS: readonly JumpChain[] = [
  { table: 'filter', dstChain: KUBE_CHAINS.EXTERNAL_SERVICES, srcChain: 'INPUT', comment: 'kubernetes externally-visible service portals', extraArgs: CT_NEW },
  { table: 'filter', dstChain: KUBE_CHAINS.EXTERNAL_SERVICES, srcChain: 'FORWARD', comment: 'kubernetes externally-visible service portals', extraArgs: CT_NEW },
  { table: 'filter', dstChain: KUBE_CHAINS.NODEPORTS, srcChain: 'INPUT', comment: 'kubernetes health check service ports', extraArgs: NONE },
  { table: 'filter', dstChain: KUBE_CHAINS.SERVICES, srcChain: 'FORWARD', comment: 'kubernetes service portals', extraArgs: CT_NEW },
  { table: 'filter', dstChain: KUBE_CHAINS.SERVICES, srcChain: 'OUTPUT', comment: 'kubernetes service portals', extraArgs: CT_NEW },
  { table: 'filter', dstChain: KUBE_CHAINS.FORWARD, srcChain: 'FORWARD', comment: 'kubernetes forwarding rules', extraArgs: NONE },
  { table: 'filter', dstChain: KUBE_CHAINS.PROXY_FIREWALL, srcChain: 'INPUT', comment: 'kubernetes load balancer firewall', extraArgs: CT_NEW },
  { table: 'filter', dstChain: KUBE_CHAINS.PROXY_FIREWALL, srcChain: 'OUTPUT', comment: 'kubernetes load balancer firewall', extraArgs: CT_NEW },
  { table: 'filter', dstChain: KUBE_CHAINS.PROXY_FIREWALL, srcChain: 'FORWARD', comment: 'kubernetes load balancer firewall', extraArgs: CT_NEW },
  { table: 'nat', dstChain: KUBE_CHAINS.SERVICES, srcChain: 'OUTPUT', comment: 'kubernetes service portals', extraArgs: NONE },
  { table: 'nat', dstChain: KUBE_CHAINS.SERVICES, srcChain: 'PREROUTING', comment: 'kubernetes service portals', extraArgs: NONE },
  { table: 'nat', dstChain: KUBE_CHAINS.POSTROUTING, srcChain: 'POSTROUTING', comment: 'kubernetes postrouting rules', extraArgs: NONE },
];

/**
 * Duplicates of the jump rules kubelet creates (upstream's iptablesKubeletJumpChains): ensured on
 * every full sync after JUMP_CHAINS, but never removed by cleanup.
 */
export const KUBELET_JUMP_CHAINS: readonly JumpChain[] = [
  { table: 'filter', dstChain: KUBE_CHAINS.KUBELET_FIREWALL, srcChain: 'INPUT', comment: '', extraArgs: NONE },
  { table: 'filter', dstChain: KUBE_CHAINS.KUBELET_FIREWALL, srcChain: 'OUTPUT', comment: '', extraArgs: NONE },
];

/** Jump rules of chains that were removed from JUMP_CHAINS, only cleaned up (upstream: empty). */
export const CLEANUP_ONLY_JUMP_CHAINS: readonly JumpChain[] = [];

/**
 * The arguments of a jump rule, as upstream passes them to EnsureRule on sync
 * (extraArgs, then `-m comment --comment C` when the comment is non-empty, then `-j DST`).
 * With `forCleanup`, the comment is always included, as upstream's CleanupLeftovers does.
 * Arguments are unquoted argv entries (for exec), not iptables-restore text.
 */
export function jumpRuleArgs(jump: JumpChain, forCleanup = false): string[] {
  const args = [...jump.extraArgs];
  if (forCleanup || jump.comment !== '') args.push('-m', 'comment', '--comment', jump.comment);
  args.push('-j', jump.dstChain);
  return args;
}

/** `:CHAIN - [0:0]`, upstream's utiliptables.MakeChainLine. */
export function makeChainLine(chain: string): string {
  return `:${chain} - [0:0]`;
}
