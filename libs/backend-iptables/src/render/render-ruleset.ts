/**
 * renderRuleset: the iptables-restore payload upstream kube-proxy's syncProxyRules
 * (pkg/proxy/iptables/proxier.go, v1.31+) writes for a given state, as a pure function.
 *
 * Rule texts, chain names, comments (with upstream's quoting), probabilities, and the order of
 * chains and rules are upstream's. The caller (the proxier runtime) does everything around it:
 * jump rules (JUMP_CHAINS), iptables-save of the nat table for stale-chain deletion, the
 * iptables-restore call (--noflush --counters), conntrack cleanup, metrics, health checks.
 *
 * ## Where this differs from upstream, and why
 *
 * 1. Service order. Upstream iterates `svcPortMap`, a Go map, so the order in which services'
 *    rules appear in KUBE-SERVICES / KUBE-NODEPORTS / the filter chains changes from sync to sync.
 *    We iterate services sorted by ServicePortName key (plain code-unit order) so the payload is
 *    deterministic. Every rule text is upstream's; only the (arbitrary) interleaving differs,
 *    and upstream's own tests normalise exactly that away (sortIPTablesRules).
 * 2. Stale chain deletion. Upstream walks `existing.Difference(active)`, a Go set (random order);
 *    we write the `-X` lines (and their flushing chain lines) sorted by chain name.
 *    Whether to delete at all this sync is the caller's decision, as is running iptables-save:
 *    upstream does it on every sync, except in large-cluster mode at most once per syncPeriod.
 *    Use `isLargeClusterMode(serviceMap, endpointsMap)` before rendering, pass
 *    `existingNatChains: null` to skip, and set lastCleanup when `result.staleChainCleanupRan`.
 * 3. nodePortAddresses IPs are written in the order given (upstream: Go map order from
 *    GetNodeIPs). IPs not of `family` are ignored (upstream never has any).
 * 4. Upstream's NewProxier turns localhostNodePorts off when nodePortAddresses does not contain
 *    an IPv4 loopback address; we apply the same rule here from `nodePortAddresses` (`all`, or an
 *    IPv4 loopback IP among `ips`), so passing the raw flag is enough.
 * 5. Options that upstream reads from the environment are explicit: `randomFully`
 *    (iptables.HasRandomFully()), `conntrackTCPLiberal` (nf_conntrack_tcp_be_liberal sysctl),
 *    `nfacct` (which nfacct counters exist), `nodeIP` (for loadBalancerSourceRanges).
 * 6. The masquerade mark defaults to upstream NewProxier's `fmt.Sprintf("%#08x", 1<<bit)`, i.e.
 *    "0x00004000" for bit 14 (not "0x4000": that literal comes from upstream's unit-test fake
 *    proxier; `masqueradeMark` lets tests use it).
 * 7. IP/CIDR strings are written as given: canonicalising them (upstream's net.IP.String(),
 *    e.g. for TestBadIPs' "172.30.0.041") is core's job when building ServicePort/Endpoint.
 * 8. Endpoint order within a service is the EndpointsMap order (core sorts by `ip:port` string as
 *    upstream's EndpointSliceCache does).
 * 9. Upstream logs and skips services/endpoints that fail a type assertion; ours cannot fail.
 * 10. Partial syncs: upstream formats the rules of unchanged services into a discarding buffer to
 *    count them; we count them without formatting (same counts, see natRuleCountTotal).
 * 11. Defaults for options upstream always knows: `nfacct` none (upstream: whichever counters it
 *    managed to create, normally both), `conntrackTCPLiberal` false, `nodeIP` null (upstream's nil
 *    nodeIP behaves the same: no "allow from node" rules in KUBE-FW chains).
 * 12. Partial syncs leave out unchanged top-level chains (only with `appliedChains`; a deliberate
 *    difference from upstream's partial payload). Upstream's partial sync still rewrites the whole
 *    filter table and the top-level nat chains (KUBE-SERVICES, KUBE-NODEPORTS, KUBE-POSTROUTING,
 *    KUBE-MARK-MASQ), which hold a rule or more per service: at 10,000 services a one-endpoint
 *    change costs ~1.4 MB of restore input. Given an AppliedChainMemo (what the last successful
 *    restore left in those chains), a partial sync renders each of them into its own buffer and
 *    writes it (chain line + rules) only if its bytes differ from the memo's; otherwise neither
 *    its chain line nor its rules appear, and --noflush leaves the kernel's identical copy alone.
 *    A table with nothing left to write is `*filter\nCOMMIT\n`, which iptables-restore (legacy
 *    and nft) accepts as a no-op. The resulting kernel state is identical to upstream's; only the
 *    restore input is smaller, and the written top-level chains come first in the nat section
 *    (per chain, not interleaved with the service chains: rule order within a chain is what
 *    matters, and all chain lines still precede all rules). Side effects: packet counters of
 *    elided chains are not reset, and someone else's edits to an elided chain survive until the
 *    next full sync (as upstream's partial syncs already do for unchanged services' chains).
 *    Full syncs and renders without a memo write exactly what they wrote before; a full sync with
 *    a memo only also records the chains for it. Rule counts: see RenderResult.filterRuleCount.
 * 13. Hostile input (defence in depth, render-guards.ts). Upstream trusts the API server's
 *    validation and writes names into comments as they are; we write them through core's
 *    commentText (valid names byte for byte, anything else percent-encoded and cut to fit 255
 *    bytes), refuse (UnsafeRestoreTextError, no payload) any address, port or protocol that is not
 *    the canonical text core produces, and check the finished payload's bytes (no NUL, no `\r`,
 *    no over-long line, exactly the lines written) before returning it.
 *
 * API-only differences (same text): the payload is also available as Buffers, and all three
 * views are built lazily from memory reused by the next render (see RenderResult.payload). The
 * memory and the chain-name memo live in the ChainNameCache the proxier keeps across syncs.
 *
 * No other behavioural difference is intended; in particular IPv6 has the same REJECT target as
 * IPv4 (upstream does not use a family-specific reject type) and differs only in `! -d ::1/128`
 * on the nodeports jump and in never writing KUBE-FIREWALL / localhost nodeport rules.
 */
import type { CategorizedEndpoints, Endpoint, EndpointsMap, IPFamily, LocalTrafficDetector, ServicePort, ServicePortMap, TopologyGates } from '@kube-proxy/core';
import { assertRestorePayload, categorizeEndpoints, cidrContains, isLoopbackIP as isLoopback } from '@kube-proxy/core';
import type { AppliedChainMemo } from './applied-chain-memo.js';
import { AppliedChainUpdate, appliedChainKey } from './applied-chain-memo.js';
import type { ChainNameCache, ServiceChainNames } from './chain-names.js';
import { lowerProtocol } from './chain-names.js';
import { isServiceChainName, KUBE_CHAINS, LARGE_CLUSTER_ENDPOINTS_THRESHOLD, makeChainLine, NFACCT_COUNTERS } from './constants.js';
import { formatMasqueradeMark, isIPv4Loopback, isIPv6String, probability } from './format.js';
import type { LineBuffer, LineSink } from './line-buffer.js';
import { TeeSink } from './line-buffer.js';
import { localDetectorArgs } from './local-detector-args.js';
import { assertRenderableOptions, checkedEndpointChain, checkServiceOnce } from './render-guards.js';

export interface RenderOptions {
  /** IPv4 → iptables, IPv6 → ip6tables semantics. */
  family: IPFamily;
  nodeName: string;
  /** This node's IP of `family` (upstream's nodeIP), used to let the node through loadBalancerSourceRanges; null if unknown. */
  nodeIP?: string | null;
  /** mark = 1 << bit. */
  masqueradeBit: number;
  /** Explicit mark text; default formatMasqueradeMark(masqueradeBit) as upstream ("0x00004000" for 14). */
  masqueradeMark?: string;
  masqueradeAll: boolean;
  /** --iptables-localhost-nodeports; only effective for IPv4 and when nodePortAddresses includes IPv4 loopback. */
  localhostNodePorts: boolean;
  /** MASQUERADE --random-fully (upstream: iptables.HasRandomFully()). */
  randomFully: boolean;
  localDetector: LocalTrafficDetector;
  /** Resolved by the proxier; `all` = upstream's "no nodePortAddresses" (MatchAll) → addrtype LOCAL. */
  nodePortAddresses: { all: true } | { all: false; ips: readonly string[] };
  nodeLabels: Readonly<Record<string, string>>;
  /** nf_conntrack_tcp_be_liberal is set: upstream then writes no INVALID-drop rule. Default false. */
  conntrackTCPLiberal?: boolean;
  /** Which nfacct counters exist (upstream ensures them on full syncs). Default: none. */
  nfacct?: { ctStateInvalidDropped: boolean; localhostNodePortAccepted: boolean };
  /** Feature gates core's topology reads (PreferSameTrafficDistribution). Default: every gate at its default. */
  topologyGates?: TopologyGates;
}

export interface RenderInput {
  serviceMap: ServicePortMap;
  endpointsMap: EndpointsMap;
  /** null = full sync (write every service's chains); else the namespaced names (`ns/name`) whose chains must be rewritten (partial sync, KEP-3453). */
  changedServices: ReadonlySet<string> | null;
  /** Chains currently present in the kernel's nat table (from iptables-save), used to delete stale KUBE-SVC/SEP/... chains; null = skip stale-chain deletion this time. */
  existingNatChains: ReadonlySet<string> | null;
  /**
   * What the last successful restore left in the top-level chains (see header, item 12). Given on a
   * partial sync, top-level chains whose rules are unchanged are left out of the payload; given on a
   * full sync, it only records them (the payload is the same as without). Commit
   * `result.appliedChainUpdate` to it after the restore succeeded; clear it after a failure.
   * Absent/null: every top-level chain is written, as upstream.
   */
  appliedChains?: AppliedChainMemo | null;
}

export interface RenderResult {
  /**
   * The full iptables-restore input: "*filter ... COMMIT\n*nat ... COMMIT\n".
   *
   * payload, payloadBytes and payloadChunks are three views of the same text, built lazily from
   * memory the ChainNameCache owns and reuses on the next render (an 18 MB string costs ~80 ms at
   * 10k services; the chunks cost nothing). Read what you need before calling renderRuleset again
   * with the same cache: reading these properties afterwards throws, and Buffers obtained earlier
   * are overwritten. A string, once read, stays valid.
   */
  readonly payload: string;
  /** The payload in one contiguous Buffer (one copy of the chunks into reused memory). */
  readonly payloadBytes: Buffer;
  /** The payload as an ordered list of Buffers: write them in order to iptables-restore's stdin (no copy). */
  readonly payloadChunks: readonly Buffer[];
  /** Size of the payload in bytes. */
  readonly payloadLength: number;
  /*
   * Rule counts keep upstream's two meanings: "written" = `-A` lines in this payload (what
   * iptables-restore is given), "total" = rules kube-proxy's chains hold in the kernel after it.
   * Upstream writes the whole filter table every sync, so for it filter written = total; with an
   * AppliedChainMemo a partial sync may write fewer (the elided chains' rules are counted in the
   * totals only). Without a memo, and on every full sync, the numbers are upstream's.
   */
  /** Filter rules written (kubeproxy_sync_proxy_rules_iptables_last{table="filter"}). */
  filterRuleCount: number;
  /** Filter rules in the kernel after this restore: written + kept in elided chains (kubeproxy_sync_proxy_rules_iptables_total{table="filter"}). */
  filterRuleCountTotal: number;
  /** Nat rules written, not counting `-X` lines (kubeproxy_sync_proxy_rules_iptables_last{table="nat"}). */
  natRuleCount: number;
  /** Nat rules in the kernel after this restore: written + kept by a partial sync, in unchanged services' chains and elided top-level chains (kubeproxy_sync_proxy_rules_iptables_total{table="nat"}). */
  natRuleCountTotal: number;
  /** Chain lines in the nat section of the payload (upstream's numNATChains). */
  natChainCount: number;
  /** Chain lines a partial sync left out for unchanged services' chains (kept as they are in the kernel); elided top-level chains are in elidedChains. */
  skippedNatChainCount: number;
  /** Top-level chains ("table/chain") a partial sync left out because the kernel already holds exactly their rules (needs appliedChains). */
  elidedChains: readonly string[];
  /** What to commit to input.appliedChains once the restore succeeded; null when rendered without a memo. */
  appliedChainUpdate: AppliedChainUpdate | null;
  /** Every per-service chain that should exist after this sync (written or kept). */
  activeNatChains: ReadonlySet<string>;
  staleChainsDeleted: number;
  /** Stale-chain cleanup ran (existingNatChains was given): upstream then sets lastIPTablesCleanup = now. */
  staleChainCleanupRan: boolean;
  /** number of services with Local policy and no local endpoints, by traffic policy, for metrics */
  noLocalEndpoints: { internal: number; external: number };
  /** More than LARGE_CLUSTER_ENDPOINTS_THRESHOLD endpoints: comments were omitted; upstream then cleans stale chains at most once per syncPeriod. */
  largeClusterMode: boolean;
  /** Endpoints counted for largeClusterMode (sum over served service ports). */
  totalEndpoints: number;
}

const SERVICES = KUBE_CHAINS.SERVICES;
const EXTERNAL_SERVICES = KUBE_CHAINS.EXTERNAL_SERVICES;
const NODEPORTS = KUBE_CHAINS.NODEPORTS;
const POSTROUTING = KUBE_CHAINS.POSTROUTING;
const MARK_MASQ = KUBE_CHAINS.MARK_MASQ;
const FORWARD = KUBE_CHAINS.FORWARD;
const PROXY_FIREWALL = KUBE_CHAINS.PROXY_FIREWALL;
const KUBELET_FIREWALL = KUBE_CHAINS.KUBELET_FIREWALL;

/** A top-level chain rendered with a memo: its own rule buffer, for comparison and commit. */
interface TopChain {
  table: 'filter' | 'nat';
  chain: string;
  key: string;
  rules: LineBuffer;
}

/** Memo keys of the top-level chains, built once (no string concatenation per render). */
const TOP_CHAIN_KEYS: Record<'filter' | 'nat', Record<string, string>> = {
  filter: Object.fromEntries(
    [SERVICES, EXTERNAL_SERVICES, FORWARD, NODEPORTS, PROXY_FIREWALL, KUBELET_FIREWALL].map((c) => [c, appliedChainKey('filter', c)]),
  ),
  nat: Object.fromEntries([SERVICES, NODEPORTS, POSTROUTING, MARK_MASQ].map((c) => [c, appliedChainKey('nat', c)])),
};

const NODEPORTS_COMMENT = '"kubernetes service nodeports; NOTE: this must be the last rule in this chain"';

const EMPTY_ENDPOINTS: readonly Endpoint[] = [];

/**
 * Endpoints counted as upstream does for large-cluster mode: the sum of the endpoint lists of all
 * served service ports (ready or not).
 */
export function countEndpoints(serviceMap: ServicePortMap, endpointsMap: EndpointsMap): number {
  let total = 0;
  for (const key of serviceMap.keys()) total += endpointsMap.get(key)?.length ?? 0;
  return total;
}

/**
 * Whether a render of this state will be in upstream's "large cluster mode". The proxier needs it
 * *before* rendering, to apply upstream's stale-chain policy: run iptables-save and pass
 * `existingNatChains` when `!largeClusterMode || now - lastCleanup > syncPeriod`, else pass null.
 */
export function isLargeClusterMode(serviceMap: ServicePortMap, endpointsMap: EndpointsMap): boolean {
  return countEndpoints(serviceMap, endpointsMap) > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;
}

/** Entries sorted by key in plain code-unit order (no locale work): the deterministic stand-in for Go map order. */
function sortedEntries<V>(map: ReadonlyMap<string, V>): Array<[string, V]> {
  const entries = Array.from(map);
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return entries;
}

export function renderRuleset(input: RenderInput, options: RenderOptions, names: ChainNameCache): RenderResult {
  const { serviceMap, endpointsMap, changedServices, existingNatChains } = input;
  const isIPv6 = options.family === 'IPv6';
  const mark = options.masqueradeMark ?? formatMasqueradeMark(options.masqueradeBit);
  const masqueradeAll = options.masqueradeAll;
  const detector = localDetectorArgs(options.localDetector);
  const nfacctInvalid = options.nfacct?.ctStateInvalidDropped ?? false;
  const nodeIP = options.nodeIP ?? null;
  const npa = options.nodePortAddresses;
  assertRenderableOptions(options);
  // NewProxier: `if !nodePortAddresses.ContainsIPv4Loopback() { localhostNodePorts = false }`.
  const localhostNodePorts = options.localhostNodePorts && (npa.all || npa.ips.some(isIPv4Loopback));
  const localhostNodePortsNfacct = localhostNodePorts && !isIPv6 && (options.nfacct?.localhostNodePortAccepted ?? false);

  names.beginSync();
  const buffers = names.renderBuffers;
  buffers.reset();
  const filterChains = buffers.filterChains;
  const filterRules = buffers.filterRules;
  const natChains = buffers.natChains;
  const natRules = buffers.natRules;
  // Lines a partial sync does not write for unchanged services (upstream's discard buffers):
  // counted, never formatted.
  let skippedNatChains = 0;
  let skippedNatRules = 0;

  // Top-level chains (header, item 12). Without a memo their rules go straight into the payload
  // sections, as upstream. With one, each chain's rules also go into a buffer of their own: on a
  // full sync in addition (the payload stays upstream's), on a partial sync instead, and the
  // chain is written after the loop only if it differs from what the kernel holds.
  const memo = input.appliedChains ?? null;
  const elide = memo !== null && changedServices !== null;
  const kubeletFirewall = !isIPv6 && localhostNodePorts;
  const topChains: TopChain[] = [];
  const top = (table: 'filter' | 'nat', chain: string, rules: LineBuffer, present = true): LineSink => {
    if (memo === null) return rules;
    const key = TOP_CHAIN_KEYS[table][chain];
    const own = buffers.chainBuffer(key);
    if (present) topChains.push({ table, chain, key, rules: own });
    return elide ? own : new TeeSink(rules, own);
  };
  const fServices = top('filter', SERVICES, filterRules);
  const fExternal = top('filter', EXTERNAL_SERVICES, filterRules);
  const fForward = top('filter', FORWARD, filterRules);
  const fNodePorts = top('filter', NODEPORTS, filterRules);
  const fProxyFirewall = top('filter', PROXY_FIREWALL, filterRules);
  const fKubeletFirewall = top('filter', KUBELET_FIREWALL, filterRules, kubeletFirewall);
  const nServices = top('nat', SERVICES, natRules);
  const nNodePorts = top('nat', NODEPORTS, natRules);
  const nPostrouting = top('nat', POSTROUTING, natRules);
  const nMarkMasq = top('nat', MARK_MASQ, natRules);

  // Chain lines for all the "top-level" chains we'll be filling in (when eliding: after the loop).
  if (!elide) {
    filterChains.write(makeChainLine(SERVICES));
    filterChains.write(makeChainLine(EXTERNAL_SERVICES));
    filterChains.write(makeChainLine(FORWARD));
    filterChains.write(makeChainLine(NODEPORTS));
    filterChains.write(makeChainLine(PROXY_FIREWALL));
    natChains.write(makeChainLine(SERVICES));
    natChains.write(makeChainLine(NODEPORTS));
    natChains.write(makeChainLine(POSTROUTING));
    natChains.write(makeChainLine(MARK_MASQ));
  }

  // Kubernetes-specific postrouting and masquerade-mark rules.
  nPostrouting.write(`-A ${POSTROUTING} -m mark ! --mark ${mark}/${mark} -j RETURN`);
  nPostrouting.write(`-A ${POSTROUTING} -j MARK --xor-mark ${mark}`);
  nPostrouting.write(
    `-A ${POSTROUTING} -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE` +
      (options.randomFully ? ' --random-fully' : ''),
  );
  nMarkMasq.write(`-A ${MARK_MASQ} -j MARK --or-mark ${mark}`);

  if (kubeletFirewall) {
    // Mitigation for the route_localnet security hole (kubelet writes an identical rule).
    if (!elide) filterChains.write(makeChainLine(KUBELET_FIREWALL));
    fKubeletFirewall.write(
      `-A ${KUBELET_FIREWALL} -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
    );
  }

  const activeNatChains = new Set<string>();

  // Sorted for determinism (see header, item 1).
  const services = sortedEntries(serviceMap);

  const totalEndpoints = countEndpoints(serviceMap, endpointsMap);
  const largeClusterMode = totalEndpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;

  let noLocalInternal = 0;
  let noLocalExternal = 0;

  for (let si = 0; si < services.length; si++) {
    const [svcKey, svc] = services[si];
    const protocol = lowerProtocol(svc.protocol);
    const chains: ServiceChainNames = names.service(svc.name.key, svc.protocol);
    // Names reach comments only as comment-safe text; every other value must be canonical (header, item 13).
    const n = chains.comment;
    checkServiceOnce(names, chains, svc);

    const allEndpoints = endpointsMap.get(svcKey) ?? EMPTY_ENDPOINTS;
    const cat: CategorizedEndpoints = categorizeEndpoints(allEndpoints, svc, options.nodeName, options.nodeLabels, options.topologyGates);
    const clusterEndpoints = cat.clusterEndpoints ?? EMPTY_ENDPOINTS;
    const localEndpoints = cat.localEndpoints ?? EMPTY_ENDPOINTS;
    const hasEndpoints = cat.hasAnyEndpoints;

    const clusterPolicyChain = chains.svc;
    const usesClusterPolicyChain = clusterEndpoints.length > 0 && svc.usesClusterEndpoints;
    const localPolicyChain = chains.svl;
    const usesLocalPolicyChain = localEndpoints.length > 0 && svc.usesLocalEndpoints;

    let internalPolicyChain = clusterPolicyChain;
    let hasInternalEndpoints = hasEndpoints;
    if (svc.internalPolicyLocal) {
      internalPolicyChain = localPolicyChain;
      if (localEndpoints.length === 0) hasInternalEndpoints = false;
    }
    const internalTrafficChain = internalPolicyChain;

    let externalPolicyChain = clusterPolicyChain;
    let hasExternalEndpoints = hasEndpoints;
    if (svc.externalPolicyLocal) {
      externalPolicyChain = localPolicyChain;
      if (localEndpoints.length === 0) hasExternalEndpoints = false;
    }
    const externalTrafficChain = chains.ext;

    // Based on hasEndpoints, not hasExternalEndpoints: the short-circuit rules for local
    // traffic are needed even when there are no externally-usable endpoints.
    const usesExternalTrafficChain = hasEndpoints && svc.externallyAccessible;

    const fwChain = chains.fw;
    const usesFWChain = hasEndpoints && svc.loadBalancerVIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0;
    const loadBalancerTrafficChain = usesFWChain ? fwChain : externalTrafficChain;

    let internalTrafficFilterTarget = '';
    let internalTrafficFilterComment = '';
    let externalTrafficFilterTarget = '';
    let externalTrafficFilterComment = '';
    if (!hasEndpoints) {
      internalTrafficFilterTarget = 'REJECT';
      internalTrafficFilterComment = `"${n} has no endpoints"`;
      externalTrafficFilterTarget = 'REJECT';
      externalTrafficFilterComment = internalTrafficFilterComment;
    } else {
      if (!hasInternalEndpoints) {
        internalTrafficFilterTarget = 'DROP';
        internalTrafficFilterComment = `"${n} has no local endpoints"`;
        noLocalInternal++;
      }
      if (!hasExternalEndpoints) {
        externalTrafficFilterTarget = 'DROP';
        externalTrafficFilterComment = `"${n} has no local endpoints"`;
        noLocalExternal++;
      }
    }

    const port = svc.port;
    const proto = `-m ${protocol} -p ${protocol}`;

    // Capture the clusterIP.
    if (hasInternalEndpoints) {
      nServices.write(
        `-A ${SERVICES} -m comment --comment "${n} cluster IP" ${proto} -d ${svc.clusterIP} --dport ${port} -j ${internalTrafficChain}`,
      );
    } else {
      fServices.write(
        `-A ${SERVICES} -m comment --comment ${internalTrafficFilterComment} ${proto} -d ${svc.clusterIP} --dport ${port} -j ${internalTrafficFilterTarget}`,
      );
    }

    // Capture externalIPs.
    const externalIPs = svc.externalIPs;
    for (let i = 0; i < externalIPs.length; i++) {
      const eip = externalIPs[i];
      if (hasEndpoints) {
        nServices.write(
          `-A ${SERVICES} -m comment --comment "${n} external IP" ${proto} -d ${eip} --dport ${port} -j ${externalTrafficChain}`,
        );
      }
      if (!hasExternalEndpoints) {
        fExternal.write(
          `-A ${EXTERNAL_SERVICES} -m comment --comment ${externalTrafficFilterComment} ${proto} -d ${eip} --dport ${port} -j ${externalTrafficFilterTarget}`,
        );
      }
    }

    // Capture load-balancer ingress.
    const lbVIPs = svc.loadBalancerVIPs;
    for (let i = 0; i < lbVIPs.length; i++) {
      const lbip = lbVIPs[i];
      if (hasEndpoints) {
        nServices.write(
          `-A ${SERVICES} -m comment --comment "${n} loadbalancer IP" ${proto} -d ${lbip} --dport ${port} -j ${loadBalancerTrafficChain}`,
        );
      }
      if (usesFWChain) {
        fProxyFirewall.write(
          `-A ${PROXY_FIREWALL} -m comment --comment "${n} traffic not accepted by ${fwChain}" ${proto} -d ${lbip} --dport ${port} -j DROP`,
        );
      }
    }
    if (!hasExternalEndpoints) {
      for (let i = 0; i < lbVIPs.length; i++) {
        fExternal.write(
          `-A ${EXTERNAL_SERVICES} -m comment --comment ${externalTrafficFilterComment} ${proto} -d ${lbVIPs[i]} --dport ${port} -j ${externalTrafficFilterTarget}`,
        );
      }
    }

    // Capture nodeports.
    if (svc.nodePort !== 0) {
      if (hasEndpoints) {
        if (localhostNodePortsNfacct) {
          nNodePorts.write(
            `-A ${NODEPORTS} -m comment --comment ${n} ${proto} -d 127.0.0.0/8 --dport ${svc.nodePort} -m nfacct --nfacct-name ${NFACCT_COUNTERS.LOCALHOST_NODEPORT_ACCEPTED} -j ${externalTrafficChain}`,
          );
        }
        nNodePorts.write(`-A ${NODEPORTS} -m comment --comment ${n} ${proto} --dport ${svc.nodePort} -j ${externalTrafficChain}`);
      }
      if (!hasExternalEndpoints) {
        fExternal.write(
          `-A ${EXTERNAL_SERVICES} -m comment --comment ${externalTrafficFilterComment} -m addrtype --dst-type LOCAL ${proto} --dport ${svc.nodePort} -j ${externalTrafficFilterTarget}`,
        );
      }
    }

    // Capture healthCheckNodePorts.
    if (svc.healthCheckNodePort !== 0) {
      fNodePorts.write(
        `-A ${NODEPORTS} -m comment --comment "${n} health check node port" -m tcp -p tcp --dport ${svc.healthCheckNodePort} -j ACCEPT`,
      );
    }

    // Partial sync: unchanged services keep their SVC/SVL/EXT/FW/SEP chains. Upstream still
    // "writes" them to discarding buffers (for the metrics); we only count the lines.
    const emit = changedServices === null || changedServices.has(`${svc.name.namespace}/${svc.name.name}`);

    // Set up internal traffic handling.
    if (hasInternalEndpoints && (masqueradeAll || detector.implemented)) {
      if (!emit) skippedNatRules++;
      else if (masqueradeAll) {
        natRules.write(
          `-A ${internalTrafficChain} -m comment --comment "${n} cluster IP" ${proto} -d ${svc.clusterIP} --dport ${port} -j ${MARK_MASQ}`,
        );
      } else {
        // Masquerade off-cluster traffic to a service VIP.
        natRules.write(
          `-A ${internalTrafficChain} -m comment --comment "${n} cluster IP" ${proto} -d ${svc.clusterIP} --dport ${port} ${detector.ifNotLocalText} -j ${MARK_MASQ}`,
        );
      }
    }

    // Set up external traffic handling.
    if (usesExternalTrafficChain) {
      activeNatChains.add(externalTrafficChain);
      if (!emit) {
        skippedNatChains++;
        skippedNatRules += (svc.externalPolicyLocal ? (detector.implemented ? 3 : 2) : 1) + (hasExternalEndpoints ? 1 : 0);
      } else {
        natChains.write(makeChainLine(externalTrafficChain));
        if (!svc.externalPolicyLocal) {
          natRules.write(
            `-A ${externalTrafficChain} -m comment --comment "masquerade traffic for ${n} external destinations" -j ${MARK_MASQ}`,
          );
        } else {
          if (detector.implemented) {
            natRules.write(
              `-A ${externalTrafficChain} -m comment --comment "pod traffic for ${n} external destinations" ${detector.ifLocalText} -j ${clusterPolicyChain}`,
            );
          }
          natRules.write(
            `-A ${externalTrafficChain} -m comment --comment "masquerade LOCAL traffic for ${n} external destinations" -m addrtype --src-type LOCAL -j ${MARK_MASQ}`,
          );
          natRules.write(
            `-A ${externalTrafficChain} -m comment --comment "route LOCAL traffic for ${n} external destinations" -m addrtype --src-type LOCAL -j ${clusterPolicyChain}`,
          );
        }
        if (hasExternalEndpoints) {
          natRules.write(`-A ${externalTrafficChain} -j ${externalPolicyChain}`);
        }
      }
    }

    // Set up firewall chain, if needed.
    if (usesFWChain) {
      activeNatChains.add(fwChain);
      const ranges = svc.loadBalancerSourceRanges;
      let allowFromNode = false;
      if (nodeIP !== null) {
        for (let i = 0; i < ranges.length && !allowFromNode; i++) allowFromNode = cidrContains(ranges[i], nodeIP);
      }
      if (!emit) {
        skippedNatChains++;
        skippedNatRules += ranges.length + (allowFromNode ? lbVIPs.length : 0) + 1;
      } else {
        natChains.write(makeChainLine(fwChain));
        const fwArgs = `-A ${fwChain} -m comment --comment "${n} loadbalancer IP"`;
        for (let i = 0; i < ranges.length; i++) {
          natRules.write(`${fwArgs} -s ${ranges[i]} -j ${externalTrafficChain}`);
        }
        // VIP-like LBs: requests from this node to the VIP loop back with the VIP as source.
        if (allowFromNode) {
          for (let i = 0; i < lbVIPs.length; i++) {
            natRules.write(`${fwArgs} -s ${lbVIPs[i]} -j ${externalTrafficChain}`);
          }
        }
        // Anything reaching the end of the chain was not DNATed: KUBE-PROXY-FIREWALL drops it.
        natRules.write(`-A ${fwChain} -m comment --comment "other traffic to ${n} will be dropped by KUBE-PROXY-FIREWALL"`);
      }
    }

    const affinity = svc.sessionAffinityClientIP;

    if (usesClusterPolicyChain) {
      activeNatChains.add(clusterPolicyChain);
      if (!emit) {
        skippedNatChains++;
        skippedNatRules += (affinity ? 2 : 1) * clusterEndpoints.length;
      } else {
        natChains.write(makeChainLine(clusterPolicyChain));
        writeServiceToEndpointRules(natRules, n, svc, clusterPolicyChain, clusterEndpoints, chains, names, largeClusterMode);
      }
    }

    if (usesLocalPolicyChain) {
      activeNatChains.add(localPolicyChain);
      if (!emit) {
        skippedNatChains++;
        skippedNatRules += (affinity ? 2 : 1) * localEndpoints.length;
      } else {
        natChains.write(makeChainLine(localPolicyChain));
        writeServiceToEndpointRules(natRules, n, svc, localPolicyChain, localEndpoints, chains, names, largeClusterMode);
      }
    }

    // Per-endpoint chains.
    const reachable = cat.allReachableEndpoints;
    if (!emit) {
      for (let i = 0; i < reachable.length; i++) activeNatChains.add(names.sepOf(chains, reachable[i].key));
      skippedNatChains += reachable.length;
      skippedNatRules += 2 * reachable.length;
    } else {
      for (let i = 0; i < reachable.length; i++) {
        const ep = reachable[i];
        // Every endpoint written for this service is one of these: checked before any payload is returned.
        const endpointChain = checkedEndpointChain(names, chains, ep);
        natChains.write(makeChainLine(endpointChain));
        activeNatChains.add(endpointChain);

        const head = largeClusterMode ? `-A ${endpointChain}` : `-A ${endpointChain} -m comment --comment ${n}`;
        // Handle traffic that loops back to the originator with SNAT.
        natRules.write(`${head} -s ${ep.ip} -j ${MARK_MASQ}`);
        // Update client-affinity lists, then DNAT to the final destination.
        natRules.write(
          affinity
            ? `${head} -m recent --name ${endpointChain} --set ${proto} -j DNAT --to-destination ${ep.key}`
            : `${head} ${proto} -j DNAT --to-destination ${ep.key}`,
        );
      }
    }
  }

  // Delete chains no longer in use (see header, item 2).
  let deletedChains = 0;
  if (existingNatChains !== null) {
    const stale: string[] = [];
    for (const chain of existingNatChains) {
      if (!activeNatChains.has(chain) && isServiceChainName(chain)) stale.push(chain);
    }
    stale.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const chain of stale) {
      // A chain line flushes the chain; then it can be deleted.
      natChains.write(makeChainLine(chain));
      natRules.write(`-X ${chain}`);
      deletedChains++;
    }
  }

  // Finally, tail-call to the nodePorts chain. This needs to be after all other service portal rules.
  if (npa.all) {
    let destinations = '-m addrtype --dst-type LOCAL';
    // Block localhost nodePorts if they are not supported.
    if (isIPv6) destinations += ' ! -d ::1/128';
    else if (!localhostNodePorts) destinations += ' ! -d 127.0.0.0/8';
    nServices.write(`-A ${SERVICES} -m comment --comment ${NODEPORTS_COMMENT} ${destinations} -j ${NODEPORTS}`);
  } else {
    for (const ip of npa.ips) {
      if (isIPv6String(ip) !== isIPv6) continue;
      if (isLoopback(ip) && (isIPv6 || !localhostNodePorts)) {
        // Upstream logs an error ("--nodeport-addresses includes localhost but ...") and skips it.
        continue;
      }
      nServices.write(`-A ${SERVICES} -m comment --comment ${NODEPORTS_COMMENT} -d ${ip} -j ${NODEPORTS}`);
    }
  }

  // Drop INVALID packets unless nf_conntrack_tcp_be_liberal is set.
  if (!(options.conntrackTCPLiberal ?? false)) {
    fForward.write(
      nfacctInvalid
        ? `-A ${FORWARD} -m conntrack --ctstate INVALID -m nfacct --nfacct-name ${NFACCT_COUNTERS.CT_STATE_INVALID_DROPPED} -j DROP`
        : `-A ${FORWARD} -m conntrack --ctstate INVALID -j DROP`,
    );
  }
  fForward.write(
    `-A ${FORWARD} -m comment --comment "kubernetes forwarding rules" -m mark --mark ${mark}/${mark} -j ACCEPT`,
  );
  fForward.write(
    `-A ${FORWARD} -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
  );

  // Top-level chains with a memo: decide which to write (partial) and what to commit (both).
  const elidedChains: string[] = [];
  let elidedFilterRules = 0;
  let elidedNatRules = 0;
  let appliedChainUpdate: AppliedChainUpdate | null = null;
  if (memo !== null) {
    const written: Array<readonly [string, LineBuffer]> = [];
    for (const t of topChains) {
      if (!elide) {
        written.push([t.key, t.rules]);
      } else if (memo.matches(t.key, t.rules)) {
        elidedChains.push(t.key);
        if (t.table === 'filter') elidedFilterRules += t.rules.lines;
        else elidedNatRules += t.rules.lines;
      } else {
        // Written in full: the chain line flushes the kernel's copy, then its rules.
        if (t.table === 'filter') {
          filterChains.write(makeChainLine(t.chain));
          filterRules.writeFrom(t.rules);
        } else {
          buffers.natTopChains.write(makeChainLine(t.chain));
          buffers.natTopRules.writeFrom(t.rules);
        }
        written.push([t.key, t.rules]);
      }
    }
    appliedChainUpdate = new AppliedChainUpdate(memo, memo.epoch, buffers, buffers.generation, written);
  }
  const natRulesWritten = natRules.lines + buffers.natTopRules.lines - deletedChains;

  // Last guard (header, item 13): the bytes are exactly the lines written, none broken or too long.
  assertRestorePayload(buffers.chunks(), buffers.lines);

  names.endSync();

  const generation = buffers.generation;
  let payloadBytes: Buffer | undefined;
  let payloadText: string | undefined;

  return {
    get payload(): string {
      if (payloadText === undefined) {
        buffers.assertCurrent(generation);
        payloadText = (payloadBytes ??= buffers.assemble()).toString('latin1');
      }
      return payloadText;
    },
    get payloadBytes(): Buffer {
      buffers.assertCurrent(generation);
      return (payloadBytes ??= buffers.assemble());
    },
    get payloadChunks(): readonly Buffer[] {
      buffers.assertCurrent(generation);
      return buffers.chunks();
    },
    payloadLength: buffers.length,
    filterRuleCount: filterRules.lines,
    filterRuleCountTotal: filterRules.lines + elidedFilterRules,
    natRuleCount: natRulesWritten,
    natRuleCountTotal: natRulesWritten + skippedNatRules + elidedNatRules,
    natChainCount: natChains.lines + buffers.natTopChains.lines,
    skippedNatChainCount: skippedNatChains,
    elidedChains,
    appliedChainUpdate,
    activeNatChains,
    staleChainsDeleted: deletedChains,
    staleChainCleanupRan: existingNatChains !== null,
    noLocalEndpoints: { internal: noLocalInternal, external: noLocalExternal },
    largeClusterMode,
    totalEndpoints,
  };
}

/** Session-affinity and load-balancing rules from a SVC/SVL chain to its endpoints (upstream's writeServiceToEndpointRules). */
function writeServiceToEndpointRules(
  natRules: LineSink,
  n: string,
  svc: ServicePort,
  svcChain: string,
  endpoints: readonly Endpoint[],
  chains: ServiceChainNames,
  names: ChainNameCache,
  largeClusterMode: boolean,
): void {
  const count = endpoints.length;
  if (svc.sessionAffinityClientIP) {
    const seconds = svc.stickyMaxAgeSeconds;
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
