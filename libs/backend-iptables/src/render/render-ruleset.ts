/**
 * renderRuleset: the iptables-restore payload upstream kube-proxy's syncProxyRules
 * (pkg/proxy/iptables/proxier.go, v1.31+) writes for a given state, as a pure function.
 *
 * Rule texts, chain names, comments (with upstream's quoting), probabilities, and the order of
 * chains and rules are upstream's. The caller (the proxier runtime) does everything around it:
 * jump rules (JUMP_CHAINS), iptables-save of the nat table for stale-chain deletion, the
 * iptables-restore call (--noflush --counters), conntrack cleanup, metrics, health checks.
 *
 * ## Who decides what
 *
 * The Kubernetes meaning of each service port (which addresses it answers on per traffic class,
 * which endpoints each class reaches, where to masquerade, source-range firewalls, what happens
 * without usable endpoints, the health-check node port) is core's `planServicePort`, and which node
 * addresses node ports answer on is core's `planNodePortAddresses`: the same plans every kernel
 * backend consumes. This file only orders the payload (buffers, top-level chain memo, partial
 * syncs, stale chains) and hands each plan to one small writer per concern (write-*.ts), which
 * turn plan fields into upstream's rule texts.
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
 *    an IPv4 loopback address; core's planNodePortAddresses applies the same rule per render from
 *    `nodePortAddresses` (`all`, or an IPv4 loopback IP among `ips`), so passing the raw flag is enough.
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
import type { Endpoint, EndpointsMap, IPFamily, LocalTrafficDetector, ServicePlanContext, ServicePortMap, TopologyGates } from '@kube-proxy/core';
import { assertRestorePayload, localDetectorArgs, planNodePortAddresses, planServicePort } from '@kube-proxy/core';
import type { AppliedChainMemo } from './applied-chain-memo.js';
import { AppliedChainUpdate, appliedChainKey } from './applied-chain-memo.js';
import type { ChainNameCache, ServiceChainNames } from './chain-names.js';
import { lowerProtocol } from './chain-names.js';
import { KUBE_CHAINS, LARGE_CLUSTER_ENDPOINTS_THRESHOLD, makeChainLine } from './constants.js';
import { formatMasqueradeMark } from './format.js';
import type { LineBuffer, LineSink } from './line-buffer.js';
import { TeeSink } from './line-buffer.js';
import { assertRenderableOptions, checkServiceOnce } from './render-guards.js';
import type { ServiceWriteContext } from './service-write-context.js';
import { writeClusterIPCapture, writeClusterIPMasquerade } from './write-cluster-ip.js';
import { writeEndpointChains, writePolicyChains } from './write-endpoints.js';
import { writeExternalChain } from './write-external-chain.js';
import { writeExternalIPs } from './write-external-ips.js';
import { writeFirewallChain, writeLoadBalancerIPs } from './write-load-balancer.js';
import { writeStaleChainDeletions } from './write-stale-chains.js';
import { writeHealthCheckNodePort, writeNodePort, writeNodePortsJump } from './write-node-port.js';
import { writeForwardRules, writeKubeletFirewall, writeMasqueradeChains } from './write-top-level.js';

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
  const detector = localDetectorArgs(options.localDetector);
  const nfacctInvalid = options.nfacct?.ctStateInvalidDropped ?? false;
  assertRenderableOptions(options);
  // Which addresses node ports answer on, and whether localhost node ports are effective (core's decision).
  const nodePortPlan = planNodePortAddresses(options.family, options.nodePortAddresses, options.localhostNodePorts);
  const localhostNodePorts = nodePortPlan.localhostNodePorts;
  const localhostNodePortsNfacct = localhostNodePorts && (options.nfacct?.localhostNodePortAccepted ?? false);

  names.beginSync();
  const buffers = names.renderBuffers;
  buffers.reset();
  const filterChains = buffers.filterChains;
  const filterRules = buffers.filterRules;
  const natChains = buffers.natChains;
  const natRules = buffers.natRules;

  // Top-level chains (header, item 12). Without a memo their rules go straight into the payload
  // sections, as upstream. With one, each chain's rules also go into a buffer of their own: on a
  // full sync in addition (the payload stays upstream's), on a partial sync instead, and the
  // chain is written after the loop only if it differs from what the kernel holds.
  const memo = input.appliedChains ?? null;
  const elide = memo !== null && changedServices !== null;
  const kubeletFirewall = localhostNodePorts;
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
  writeMasqueradeChains(nPostrouting, nMarkMasq, mark, options.randomFully);

  if (kubeletFirewall) {
    if (!elide) filterChains.write(makeChainLine(KUBELET_FIREWALL));
    writeKubeletFirewall(fKubeletFirewall);
  }

  // Sorted for determinism (see header, item 1).
  const services = sortedEntries(serviceMap);

  const totalEndpoints = countEndpoints(serviceMap, endpointsMap);
  const largeClusterMode = totalEndpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;

  // Every Kubernetes decision per service port is core's plan; the writers only turn it into rules.
  const planContext: ServicePlanContext = {
    nodeName: options.nodeName,
    nodeLabels: options.nodeLabels,
    topologyGates: options.topologyGates,
    masqueradeAll: options.masqueradeAll,
    localDetection: detector.implemented,
    nodeIP: options.nodeIP ?? null,
  };
  const w: ServiceWriteContext = {
    fServices,
    fExternal,
    fNodePorts,
    fProxyFirewall,
    nServices,
    nNodePorts,
    natChains,
    natRules,
    detector,
    names,
    largeClusterMode,
    localhostNodePortsNfacct,
    activeNatChains: new Set<string>(),
    // Lines a partial sync does not write for unchanged services (upstream's discard buffers):
    // counted, never formatted.
    skippedNatChains: 0,
    skippedNatRules: 0,
  };
  const activeNatChains = w.activeNatChains;

  let noLocalInternal = 0;
  let noLocalExternal = 0;

  for (let si = 0; si < services.length; si++) {
    const [svcKey, svc] = services[si];
    const protocol = lowerProtocol(svc.protocol);
    const chains: ServiceChainNames = names.service(svc.name.key, svc.protocol);
    // Names reach comments only as comment-safe text; every other value must be canonical (header, item 13).
    checkServiceOnce(names, chains, svc);

    const plan = planServicePort(svc, endpointsMap.get(svcKey) ?? EMPTY_ENDPOINTS, planContext);
    // 'drop' is the verdict of a Local policy with no local endpoint (the metric's meaning).
    if (plan.internalVerdict === 'drop') noLocalInternal++;
    if (plan.externalVerdict === 'drop') noLocalExternal++;

    const proto = `-m ${protocol} -p ${protocol}`;

    // Top-level chains: captures and verdicts of every address the port answers on.
    writeClusterIPCapture(w, plan, chains, proto);
    writeExternalIPs(w, plan, chains, proto);
    writeLoadBalancerIPs(w, plan, chains, proto);
    writeNodePort(w, plan, chains, proto);
    writeHealthCheckNodePort(w, plan, chains);

    // Partial sync: unchanged services keep their SVC/SVL/EXT/FW/SEP chains. Upstream still
    // "writes" them to discarding buffers (for the metrics); we only count the lines.
    const emit = changedServices === null || changedServices.has(`${svc.name.namespace}/${svc.name.name}`);

    // Per-service chains, in upstream's order.
    writeClusterIPMasquerade(w, plan, chains, proto, emit);
    writeExternalChain(w, plan, chains, emit);
    writeFirewallChain(w, plan, chains, emit);
    writePolicyChains(w, plan, chains, emit);
    writeEndpointChains(w, plan, chains, proto, emit);
  }

  // Delete chains no longer in use (see header, item 2).
  const deletedChains = existingNatChains === null ? 0 : writeStaleChainDeletions(existingNatChains, activeNatChains, natChains, natRules);

  // Finally, tail-call to the nodePorts chain. This needs to be after all other service portal rules.
  writeNodePortsJump(nServices, nodePortPlan, isIPv6);

  // Drop INVALID packets unless nf_conntrack_tcp_be_liberal is set.
  writeForwardRules(fForward, mark, !(options.conntrackTCPLiberal ?? false), nfacctInvalid);

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
    natRuleCountTotal: natRulesWritten + w.skippedNatRules + elidedNatRules,
    natChainCount: natChains.lines + buffers.natTopChains.lines,
    skippedNatChainCount: w.skippedNatChains,
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
