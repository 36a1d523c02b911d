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
 * Where the payload deliberately differs from upstream's (service and stale-chain order, partial
 * syncs eliding unchanged top-level chains, hostile-input guards, ...) is listed in the backend's
 * README.md, "Where we differ from upstream", each difference with the spec that pins it.
 */
import type { EndpointsMap, IPFamily, LocalTrafficDetector, ServicePlanContext, ServicePortMap, TopologyGates } from '@kube-proxy/core';
import type { LocalDetectorArgs } from '@kube-proxy/netfilter-iptables';
import { assertRestorePayload, planNodePortAddresses } from '@kube-proxy/core';
import { localDetectorArgs } from '@kube-proxy/netfilter-iptables';
import type { AppliedChainMemo, AppliedChainUpdate } from './applied-chain-memo.js';
import type { ChainNameCache } from './chain-names.js';
import { KUBE_CHAINS, LARGE_CLUSTER_ENDPOINTS_THRESHOLD, makeChainLine } from './constants.js';
import { formatMasqueradeMark } from './format.js';
import type { RenderBuffers } from './line-buffer.js';
import { assertRenderableOptions } from './render-guards.js';
import type { ServiceWriteContext } from './service-write-context.js';
import type { TopLevelChains, TopLevelOutcome } from './top-level-chains.js';
import { openTopLevelChains, settleTopLevelChains, writeTopLevelChainLines } from './top-level-chains.js';
import { writeStaleChainDeletions } from './write-stale-chains.js';
import { writeNodePortsJump } from './write-node-port.js';
import type { NoLocalEndpoints } from './write-service-ports.js';
import { writeServicePorts } from './write-service-ports.js';
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
   * What the last successful restore left in the top-level chains (README: partial syncs). Given on a
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
  const mark = options.masqueradeMark ?? formatMasqueradeMark(options.masqueradeBit);
  const detector = localDetectorArgs(options.localDetector);
  assertRenderableOptions(options);
  // Which addresses node ports answer on, and whether localhost node ports are effective (core's decision).
  const nodePortPlan = planNodePortAddresses(options.family, options.nodePortAddresses, options.localhostNodePorts);
  const localhostNodePorts = nodePortPlan.localhostNodePorts;

  names.beginSync();
  const buffers = names.renderBuffers;
  buffers.reset();

  // Top-level chains (README: partial syncs). A partial sync with a memo writes their chain lines
  // after the loop, and only for the chains that changed.
  const memo = input.appliedChains ?? null;
  const elide = memo !== null && changedServices !== null;
  const kubeletFirewall = localhostNodePorts;
  const top = openTopLevelChains(buffers, memo, elide, kubeletFirewall);
  if (!elide) writeTopLevelChainLines(buffers);

  // Kubernetes-specific postrouting and masquerade-mark rules.
  writeMasqueradeChains(top.nPostrouting, top.nMarkMasq, mark, options.randomFully);

  if (kubeletFirewall) {
    if (!elide) buffers.filterChains.write(makeChainLine(KUBE_CHAINS.KUBELET_FIREWALL));
    writeKubeletFirewall(top.fKubeletFirewall);
  }

  const totalEndpoints = countEndpoints(serviceMap, endpointsMap);
  const largeClusterMode = totalEndpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;
  const localhostNodePortsNfacct = localhostNodePorts && (options.nfacct?.localhostNodePortAccepted ?? false);
  const w = serviceWriteContext(top, buffers, names, detector, largeClusterMode, localhostNodePortsNfacct);
  // Sorted for determinism (README: service order).
  const noLocalEndpoints = writeServicePorts(w, sortedEntries(serviceMap), endpointsMap, changedServices, planContextOf(options, detector.implemented));

  // Delete chains no longer in use (README: stale chain deletion).
  const deletedChains =
    existingNatChains === null ? 0 : writeStaleChainDeletions(existingNatChains, w.activeNatChains, buffers.natChains, buffers.natRules);

  // Finally, tail-call to the nodePorts chain. This needs to be after all other service portal rules.
  writeNodePortsJump(top.nServices, nodePortPlan, options.family === 'IPv6');

  // Drop INVALID packets unless nf_conntrack_tcp_be_liberal is set.
  writeForwardRules(top.fForward, mark, !(options.conntrackTCPLiberal ?? false), options.nfacct?.ctStateInvalidDropped ?? false);

  // Top-level chains with a memo: decide which to write (partial) and what to commit (both).
  const settled = settleTopLevelChains(memo, elide, top, buffers);

  // Last guard (README: hostile input): the bytes are exactly the lines written, none broken or too long.
  assertRestorePayload(buffers.chunks(), buffers.lines);

  names.endSync();

  return lazyRenderResult(buffers, {
    w,
    settled,
    deletedChains,
    staleChainCleanupRan: existingNatChains !== null,
    noLocalEndpoints,
    largeClusterMode,
    totalEndpoints,
  });
}

/** Every Kubernetes decision per service port is core's plan; the writers only turn it into rules. */
function planContextOf(options: RenderOptions, localDetection: boolean): ServicePlanContext {
  return {
    nodeName: options.nodeName,
    nodeLabels: options.nodeLabels,
    topologyGates: options.topologyGates,
    masqueradeAll: options.masqueradeAll,
    localDetection,
    nodeIP: options.nodeIP ?? null,
  };
}

/** The one context every per-service writer of this render shares (sinks, options' text, bookkeeping). */
function serviceWriteContext(
  top: TopLevelChains,
  buffers: RenderBuffers,
  names: ChainNameCache,
  detector: LocalDetectorArgs,
  largeClusterMode: boolean,
  localhostNodePortsNfacct: boolean,
): ServiceWriteContext {
  return {
    fServices: top.fServices,
    fExternal: top.fExternal,
    fNodePorts: top.fNodePorts,
    fProxyFirewall: top.fProxyFirewall,
    nServices: top.nServices,
    nNodePorts: top.nNodePorts,
    natChains: buffers.natChains,
    natRules: buffers.natRules,
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
}

/** What a render counted, for its RenderResult. */
interface RenderTally {
  readonly w: ServiceWriteContext;
  readonly settled: TopLevelOutcome;
  readonly deletedChains: number;
  readonly staleChainCleanupRan: boolean;
  readonly noLocalEndpoints: NoLocalEndpoints;
  readonly largeClusterMode: boolean;
  readonly totalEndpoints: number;
}

/**
 * The result over the render's reusable buffers: the payload views are built on first read (an
 * 18 MB string costs ~80 ms at 10k services) and refuse to be read once a later render reused
 * the buffers (RenderResult.payload).
 */
function lazyRenderResult(buffers: RenderBuffers, t: RenderTally): RenderResult {
  const { filterRules, natChains, natRules } = buffers;
  const natRulesWritten = natRules.lines + buffers.natTopRules.lines - t.deletedChains;
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
    filterRuleCountTotal: filterRules.lines + t.settled.elidedFilterRules,
    natRuleCount: natRulesWritten,
    natRuleCountTotal: natRulesWritten + t.w.skippedNatRules + t.settled.elidedNatRules,
    natChainCount: natChains.lines + buffers.natTopChains.lines,
    skippedNatChainCount: t.w.skippedNatChains,
    elidedChains: t.settled.elidedChains,
    appliedChainUpdate: t.settled.appliedChainUpdate,
    activeNatChains: t.w.activeNatChains,
    staleChainsDeleted: t.deletedChains,
    staleChainCleanupRan: t.staleChainCleanupRan,
    noLocalEndpoints: t.noLocalEndpoints,
    largeClusterMode: t.largeClusterMode,
    totalEndpoints: t.totalEndpoints,
  };
}
