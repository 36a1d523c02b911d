/**
 * The IPVS proxier of one IP family: upstream's pkg/proxy/ipvs Proxier.syncProxyRules flow around
 * the pure pieces of this package — the desired state (state/), the kernel target with graceful
 * termination (kernel-target.ts), the restore batches (batch/) and the iptables skeleton
 * (iptables/) — on core's one sync engine (SyncingProxier), like the other backends.
 *
 * Two kinds of sync, both writing only the difference, one process per tool: `ipset restore`,
 * `iptables-restore` (only when the skeleton's text changed or a flush was noticed), `ipvsadm
 * --restore`, `ip -batch`. A sync whose state did not change writes nothing.
 * - A partial sync (service ports changed since the last successful sync) rebuilds only those
 *   ports' share of the desired state (IpvsStateIndex) and diffs just the virtual servers, set
 *   entries and VIPs they touched against what our last sync applied (AppliedIpvs): its cost
 *   follows the change, not the cluster.
 * - A repair sync reads the kernel back (`ipvsadm --save -n`, `ipset save`, kube-ipvs0's addresses)
 *   and diffs the whole desired state against it, as upstream's every sync does, so whatever someone
 *   else changed (a flushed set, a deleted virtual server, an unbound VIP) is repaired. It runs on the
 *   engine's full syncs (start, after a failure, a topology change), on every sync that finds no
 *   service changed (the --ipvs-sync-period timer, upstream's maxInterval; a node or flush event),
 *   and at least once per --ipvs-sync-period under a steady stream of changes.
 * iptables flushes are noticed by core's flush monitor, which checks the jumps and every rule of
 * the skeleton once per sync period. A failed sync drops the index and the applied view: the next
 * sync is a full rebuild and a repair.
 *
 * Order within a sync (so that a new service's VIP never answers before its virtual server exists,
 * and sets exist before the rules that match them): ipsets, iptables, IPVS, kube-ipvs0.
 */
import { networkInterfaces as osNetworkInterfaces } from 'node:os';
import type { Clock, CommandExecutor, IPFamily, Logger, ProxyContext } from '@kube-proxy/core';
import type { IptablesInterface, RuleSpec, Table } from '@kube-proxy/netfilter-iptables';
import { BURST_SYNCS, ConntrackCleaner, newSyncStats, NodePortInterfaces, SyncingProxier, parseCIDR, parseDuration, parseNodePortAddresses, resolveNodePortAddresses, localDetectorAfterNodeEvent, selectLocalDetector, topologyGates, type LocalTrafficDetector, type NetworkInterfaces, type NodePortAddresses, type ProxierObservers, type SyncRequest, type SyncResult, type SyncStats, type TopologyGates, type V1Node } from '@kube-proxy/core';
import { IptablesFlushMonitor, tokenize, type InMemoryTables } from '@kube-proxy/netfilter-iptables';
import { diffIpset, diffIpvsadm } from '../batch/diff-batches.js';
import { createSetLine } from '../batch/ipset-text.js';
import { checkedBatch } from '../batch/render-batches.js';
import { IPVS_IPTABLES_JUMPS, renderIpvsIptables, type IpvsIptablesPayload } from '../iptables/index.js';
import type { IpvsKernel } from '../kernel/ipvs-kernel.js';
import type { IpvsStateOptions } from '../state/build-desired-state.js';
import { ipsetCatalogue } from '../state/ipset-catalogue.js';
import { IpvsStateIndex, type IndexChange } from '../state/ipvs-state-index.js';
import type { DesiredIpvsState, IpsetState } from '../state/ipvs-state.js';
import { AppliedIpvs } from './applied-ipvs.js';
import { changedServicePorts } from './changed-ports.js';
import { partialBatches } from './partial-batches.js';
import { dryRunKernelText } from './dry-run-output.js';
import type { HostSetup } from './host-setup.js';
import { kernelTarget } from './kernel-target.js';
import { hostAddresses } from './node-addresses.js';

/** Counters of one proxier beyond the engine's SyncStats. */
export interface IpvsProxierStats extends SyncStats {
  iptablesRestores: number;
  restoreFailures: number;
  flushesDetected: number;
  lastWrites: { ipvsadm: number; ipset: number; iptables: number; link: number };
  virtualServers: number;
  realServers: number;
  terminatingRealServers: number;
  /** Syncs that read the kernel back and diffed the whole state (the rest were partial). */
  repairSyncs: number;
}

export interface IpvsProxierOptions {
  readonly family: IPFamily;
  readonly context: ProxyContext;
  readonly kernel: IpvsKernel;
  readonly iptables: IptablesInterface;
  readonly executor: CommandExecutor;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Host tuning shared by both families' proxiers; absent in --dry-run. */
  readonly hostSetup?: HostSetup;
  /** os.networkInterfaces, injected for tests. */
  readonly networkInterfaces?: NetworkInterfaces;
  /** --dry-run: the in-memory tables behind `iptables`, printed after each sync. */
  readonly dryRunTables?: InMemoryTables;
  readonly tagDryRunOutput?: boolean;
  readonly observers?: ProxierObservers;
}

/** The rules of a restore payload as flush-monitor specs (`-A CHAIN args…` lines), by table. */
function payloadRules(payload: string): Map<Table, RuleSpec[]> {
  const out = new Map<Table, RuleSpec[]>();
  let table: Table | undefined;
  for (const line of payload.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1) as Table;
    else if (table !== undefined && line.startsWith('-A ')) {
      const tokens = tokenize(line);
      const list = out.get(table) ?? [];
      list.push({ chain: tokens[1] as string, args: tokens.slice(2) });
      out.set(table, list);
    }
  }
  return out;
}

function lineCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

export class IpvsProxier extends SyncingProxier {
  readonly stats: IpvsProxierStats = {
    ...newSyncStats(),
    iptablesRestores: 0,
    restoreFailures: 0,
    flushesDetected: 0,
    lastWrites: { ipvsadm: 0, ipset: 0, iptables: 0, link: 0 },
    virtualServers: 0,
    realServers: 0,
    terminatingRealServers: 0,
    repairSyncs: 0,
  };

  private readonly context: ProxyContext;
  private readonly kernel: IpvsKernel;
  private readonly iptables: IptablesInterface;
  private readonly hostSetup: HostSetup | undefined;
  private readonly networkInterfaces: NetworkInterfaces;
  private readonly dryRunTables: InMemoryTables | undefined;
  private readonly nodePortAddresses: NodePortAddresses;
  private readonly topologyGates: TopologyGates;
  private readonly excludeCIDRs: readonly string[];
  /** Looks for the skeleton's rules every syncPeriod (an iptables flush forces a resync). */
  private readonly rulesMonitor: IptablesFlushMonitor;
  private localDetector: LocalTrafficDetector;
  /** The machine's interfaces, or in --dry-run this node's Node object addresses (core's NodePortInterfaces). */
  private readonly nodePortInterfaces: NodePortInterfaces;
  /** The addresses last reported as refused by the kernel (logged when this changes). */
  private reportedSkipped = '';
  /** The skeleton text the kernel holds (null: unknown, write it on the next sync). */
  private appliedIptables: string | null = null;
  private jumpsEnsured = false;
  /** The desired state per service port, built for `indexKey`'s node inputs; null: rebuild it. */
  private index: IpvsStateIndex | null = null;
  private indexKey = '';
  /** What our last successful sync left in the IPVS table; null until a repair sync succeeds. */
  private applied: AppliedIpvs | null = null;
  /** When the last repair sync started (by the proxier's clock). */
  private lastRepair = Number.NEGATIVE_INFINITY;
  /** The skeleton rendered for the current index (re-rendered when a set it reads changed). */
  private skeleton: IpvsIptablesPayload | null = null;

  constructor(options: IpvsProxierOptions) {
    const { family, context } = options;
    const config = context.config;
    const logger = options.logger.child({ ipFamily: family });
    const syncPeriodMs = parseDuration(config.ipvs.syncPeriod);
    super({
      mode: 'ipvs',
      family,
      nodeName: context.nodeName,
      logger,
      observers: options.observers,
      clock: options.clock,
      syncPeriodMs,
      minSyncPeriodMs: parseDuration(config.ipvs.minSyncPeriod),
      // Upstream's IPVS runner: at least every syncPeriod (a sync with no change is a read-back repair).
      maxSyncIntervalMs: syncPeriodMs,
      // Upstream's IPVS proxier observes only the overall sync duration, never a full/partial one.
      durationByKind: false,
      syncCompleteMessage: 'syncProxyRules complete',
      conntrack: context.dryRun ? undefined : new ConntrackCleaner({ family, executor: options.executor, logger }),
      dryRunSink: context.dryRun && options.dryRunTables ? context.dryRunSink : undefined,
      tagDryRunOutput: options.tagDryRunOutput ?? false,
    });
    this.context = context;
    this.kernel = options.kernel;
    this.iptables = options.iptables;
    this.hostSetup = options.hostSetup;
    this.networkInterfaces = options.networkInterfaces ?? osNetworkInterfaces;
    this.nodePortInterfaces = new NodePortInterfaces(context, this.networkInterfaces);
    this.dryRunTables = options.dryRunTables;
    this.nodePortAddresses = parseNodePortAddresses(config.nodePortAddresses, family, context.nodeIPs[family], logger);
    this.topologyGates = topologyGates(config.featureGates);
    this.localDetector = selectLocalDetector(config, family, undefined, logger);
    this.excludeCIDRs = (config.ipvs.excludeCIDRs ?? []).filter((c) => parseCIDR(c)?.family === family);
    logger.verbose('IPVS sync params', { minSyncPeriodMs: parseDuration(config.ipvs.minSyncPeriod), syncPeriodMs, burstSyncs: BURST_SYNCS });
    this.rulesMonitor = new IptablesFlushMonitor({
      iptables: this.iptables,
      clock: this.clock,
      logger,
      intervalMs: syncPeriodMs,
      tables: ['nat', 'filter'],
      subject: 'IPVS-mode iptables rules',
      onFlush: () => {
        this.stats.flushesDetected++;
        this.appliedIptables = null;
        this.jumpsEnsured = false;
        this.sync();
      },
    });
    this.watchForFlushes(this.rulesMonitor);
  }

  /**
   * NodeCIDR local detection follows this Node's podCIDRs (the skeleton's masquerade rules); a dry
   * run's node-port addresses follow its addresses.
   */
  protected override nodeEvent(node: V1Node, deleted: boolean): void {
    let resync = this.nodePortInterfaces.nodeEvent(node, deleted);
    const detector = localDetectorAfterNodeEvent(this.context.config, this.family, this.context.nodeName, this.localDetector, { node, deleted }, this.logger);
    if (detector !== undefined) {
      this.localDetector = detector;
      resync = true;
    }
    if (!resync) return;
    this.index = null; // node-wide inputs moved: the next sync rebuilds every service port
    if (this.state.isInitialized()) this.sync();
  }

  /**
   * The node's addresses, any family, unfiltered (node-port-ips.ts filters): a real run's interfaces
   * but kube-ipvs0 (upstream's GetAllLocalAddressesExcept); a dry run's Node object (node-addresses.ts).
   */
  private localAddresses(): string[] {
    if (!this.context.dryRun) return hostAddresses(this.networkInterfaces);
    return this.nodePortInterfaces.describedAddresses();
  }

  private stateOptions(): IpvsStateOptions {
    const config = this.context.config;
    const localAddresses = this.localAddresses();
    return {
      family: this.family,
      nodeName: this.context.nodeName,
      nodeLabels: this.state.nodeLabels,
      nodeIP: this.context.nodeIPs[this.family] ?? null,
      topologyGates: this.topologyGates,
      scheduler: config.ipvs.scheduler,
      masqueradeAll: config.iptables.masqueradeAll,
      localDetection: this.localDetector.kind !== 'none',
      // --nodeport-addresses CIDRs select among the same addresses "all" would take.
      nodePortAddresses: resolveNodePortAddresses(this.nodePortAddresses, this.nodePortInterfaces.interfaces()),
      localAddresses,
    };
  }

  private renderIptables(desired: DesiredIpvsState): IpvsIptablesPayload {
    const config = this.context.config;
    return renderIpvsIptables(desired, {
      family: this.family,
      masqueradeBit: config.iptables.masqueradeBit,
      masqueradeAll: config.iptables.masqueradeAll,
      localDetector: this.localDetector,
      randomFully: this.context.host.iptablesRandomFully,
    });
  }

  /** A failed sync may have half-applied its batches: forget what we think the kernel holds (the retry is a full one). */
  protected override afterSync(succeeded: boolean): void {
    if (succeeded) return;
    this.appliedIptables = null;
    this.index = null;
    this.applied = null;
  }

  /**
   * The datapath step: the changed service ports' share of the desired state rebuilt (every port on
   * a full sync or when node-wide inputs moved), then either a repair sync (the kernel read back and
   * the whole state diffed) or a partial one (only what the change touched); see the top of this file.
   */
  protected async syncOnce(request: SyncRequest): Promise<SyncResult> {
    await this.hostSetup?.ensure();
    const options = this.stateOptions();
    const key = JSON.stringify([options.nodeIP, options.nodePortAddresses, options.localAddresses, options.localDetection]);
    let index = this.index;
    const rebuild = request.full || index === null || this.applied === null || key !== this.indexKey;
    if (rebuild || index === null) {
      index = IpvsStateIndex.build(this.state.serviceMap, this.state.endpointsMap, options);
      this.skeleton = null;
    } else {
      for (const port of changedServicePorts(request.applied, this.state.serviceMap, index)) index.update(port, this.state.serviceMap, this.state.endpointsMap);
    }
    this.index = index;
    this.indexKey = key;
    const change = index.takeChange();
    // No Service changed: the timer, a node or a flush event asked for this sync, so it checks the kernel.
    const noServiceChanged = request.applied.services.updatedServices.size === 0 && request.applied.endpoints.updatedServices.size === 0;
    const repair = rebuild || this.applied === null || noServiceChanged || request.start - this.lastRepair >= this.syncPeriodMs;
    const result = repair ? await this.repairSync(index, request.start) : await this.partialSync(index, change, this.applied as AppliedIpvs);
    if (result.outcome !== 'synced') return result;
    return {
      ...result,
      noLocalEndpoints: index.noLocalEndpoints,
      ...(this.dryRunTables ? { dryRunOutput: [await dryRunKernelText(this.kernel, this.family, this.dryRunTables.saveAll(['filter', 'nat']))] } : {}),
    };
  }

  /** The skeleton for the index's sets, rendered again only when `change` moved something it reads. */
  private currentSkeleton(index: IpvsStateIndex, change: IndexChange | null): IpvsIptablesPayload {
    const reads = change === null || change.emptinessChanged || change.rolesChanged.has('KUBE-LOAD-BALANCER-FW') || change.rolesChanged.has('KUBE-LOAD-BALANCER-SOURCE-IP');
    if (this.skeleton === null || reads) this.skeleton = this.renderIptables({ family: this.family, virtualServers: [], bindAddresses: [], ipsets: index.ipsets() });
    return this.skeleton;
  }

  /** The repair sync: the kernel read back, the whole desired state diffed against it (upstream's every sync). */
  private async repairSync(index: IpvsStateIndex, start: number): Promise<SyncResult> {
    const desired = index.materialize();
    this.reportSkipped(desired.skippedAddresses ?? []);
    // Read the kernel back: what it holds is what we diff against.
    const [current, sets, bound] = await Promise.all([
      this.kernel.readVirtualServers(this.family),
      this.kernel.readIpsets(),
      this.kernel.readBoundAddresses(this.family),
    ]);
    const currentState: DesiredIpvsState = { family: this.family, virtualServers: current, bindAddresses: bound ?? [], ipsets: [] };
    const ipsetScript = await this.applyIpsets(currentState, sets, desired);
    this.skeleton = this.renderIptables(desired);
    const iptablesLines = await this.applyIptables(this.skeleton);
    if (iptablesLines === null) return { outcome: 'failed' };
    const { target, ipvsBatch } = await this.applyIpvs(currentState, desired);
    const linkWrites = await this.applyBindings(desired, bound);

    const applied = new AppliedIpvs(this.family);
    applied.replaceAll(target);
    this.applied = applied;
    this.lastRepair = start;
    this.stats.repairSyncs++;
    this.recordStats({ ipvsadm: lineCount(ipvsBatch), ipset: lineCount(ipsetScript), iptables: iptablesLines, link: linkWrites }, applied);
    if (target.terminating.length > 0) this.logger.verbose('Real servers in graceful termination', { realServers: target.terminating });
    return { outcome: 'synced' };
  }

  /**
   * The partial sync: the set entries, skeleton, virtual servers and VIPs the changed service ports
   * touched, diffed against what our last sync applied, in the order of a repair sync. The applied
   * view advances only once every batch went in.
   */
  private async partialSync(index: IpvsStateIndex, change: IndexChange, applied: AppliedIpvs): Promise<SyncResult> {
    if (change.skippedChanged) this.reportSkipped(index.skippedAddresses());
    const batches = await partialBatches(index, change, applied, this.excludeCIDRs, () => this.kernel.readConnections());
    await this.kernel.applyIpset(batches.ipset);
    const iptablesLines = await this.applyIptables(this.currentSkeleton(index, change));
    if (iptablesLines === null) return { outcome: 'failed' };
    const { ipvs } = batches;
    await this.kernel.applyIpvsadm(ipvs.batch);
    for (const name of ipvs.target.drained) this.logger.verbose('Deleted a drained real server', { realServer: name });
    await this.kernel.applyLinkChanges({ createLink: false, add: batches.bind, remove: batches.unbind });
    applied.commit(ipvs);
    const link = batches.bind.length + batches.unbind.length;
    this.recordStats({ ipvsadm: lineCount(ipvs.batch), ipset: lineCount(batches.ipset), iptables: iptablesLines, link }, applied);
    if (ipvs.target.terminating.length > 0) this.logger.verbose('Real servers in graceful termination', { realServers: ipvs.target.terminating });
    return { outcome: 'synced' };
  }

  private recordStats(lastWrites: IpvsProxierStats['lastWrites'], applied: AppliedIpvs): void {
    Object.assign(this.stats, {
      lastWrites,
      virtualServers: applied.virtualServers,
      realServers: applied.realServers,
      terminatingRealServers: applied.terminatingRealServers,
    });
  }

  /** 1. ipsets: create what is missing, then entries by difference (never flushed while referenced). Returns the script. */
  private async applyIpsets(currentState: DesiredIpvsState, sets: ReadonlyMap<string, readonly string[]>, desired: DesiredIpvsState): Promise<string> {
    const currentSets: IpsetState[] = [];
    const creates: string[] = [];
    for (const def of ipsetCatalogue(this.family)) {
      const entries = sets.get(def.name);
      if (entries === undefined) creates.push(createSetLine(def));
      currentSets.push({ set: def, entries: entries ?? [] });
    }
    const ipsetScript = checkedBatch(creates) + diffIpset({ ...currentState, ipsets: currentSets }, desired);
    await this.kernel.applyIpset(ipsetScript);
    return ipsetScript;
  }

  /**
   * 2. The iptables skeleton: one iptables-restore, only when its text changed (or after a flush).
   * Returns the lines written, null when iptables-restore refused them.
   */
  private async applyIptables(skeleton: IpvsIptablesPayload): Promise<number | null> {
    let iptablesLines = 0;
    if (!this.jumpsEnsured) {
      // Outside the restore, so other rules in the built-in chains are left alone (as upstream).
      const ensured = new Set<string>();
      for (const jump of IPVS_IPTABLES_JUMPS) {
        const key = `${jump.table}/${jump.to}`;
        if (!ensured.has(key)) await this.iptables.ensureChain(jump.table, jump.to);
        ensured.add(key);
        await this.iptables.ensureRule(jump.position, jump.table, jump.from, jump.args);
      }
      this.jumpsEnsured = true;
    }
    if (skeleton.payload !== this.appliedIptables) {
      // Rules this restore removes must not look like a flush to a check running meanwhile.
      this.rulesMonitor.clearExpectedRules();
      try {
        await this.iptables.restore(skeleton.payload, { noFlush: true, counters: true });
      } catch (err) {
        this.stats.restoreFailures++;
        this.observers.metrics?.iptablesRestoreFailed(this.family, false);
        this.logger.error('Failed to execute iptables-restore', { error: err instanceof Error ? err.message : String(err) });
        return null;
      }
      this.appliedIptables = skeleton.payload;
      this.stats.iptablesRestores++;
      iptablesLines = lineCount(skeleton.payload);
    }
    const expected = payloadRules(skeleton.payload);
    for (const jump of [...IPVS_IPTABLES_JUMPS].reverse()) {
      const list = expected.get(jump.table) ?? [];
      list.unshift({ chain: jump.from, args: jump.args });
      expected.set(jump.table, list);
    }
    this.rulesMonitor.setExpectedRules(expected);
    return iptablesLines;
  }

  /** 3. IPVS: the target with graceful termination, as one ipvsadm --restore batch. */
  private async applyIpvs(currentState: DesiredIpvsState, desired: DesiredIpvsState) {
    const target = await kernelTarget({
      desired: desired.virtualServers,
      current: currentState.virtualServers,
      excludeCIDRs: this.excludeCIDRs,
      connections: () => this.kernel.readConnections(),
    });
    const ipvsBatch = diffIpvsadm(currentState, { ...desired, virtualServers: target.virtualServers });
    await this.kernel.applyIpvsadm(ipvsBatch);
    for (const name of target.drained) this.logger.verbose('Deleted a drained real server', { realServer: name });
    return { target, ipvsBatch };
  }

  /** 4. kube-ipvs0: bind every VIP, unbind the rest (upstream removes superfluous addresses). Returns the writes. */
  private async applyBindings(desired: DesiredIpvsState, bound: readonly string[] | null): Promise<number> {
    const want = new Set(desired.bindAddresses);
    const have = new Set(bound ?? []);
    const add = desired.bindAddresses.filter((a) => !have.has(a));
    const remove = [...have].filter((a) => !want.has(a)).sort();
    await this.kernel.applyLinkChanges({ createLink: bound === null, add, remove });
    return add.length + remove.length + (bound === null ? 1 : 0);
  }

  /** Upstream logs each refused netlink call every sync; once per change is enough to find the object. */
  private reportSkipped(skipped: readonly string[]): void {
    const key = skipped.join('\n');
    if (key === this.reportedSkipped) return;
    this.reportedSkipped = key;
    if (skipped.length > 0) this.logger.warn('Left out addresses the kernel refuses in IPVS mode', { skipped });
  }
}
