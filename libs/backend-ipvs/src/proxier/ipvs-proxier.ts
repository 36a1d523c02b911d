/**
 * The IPVS proxier of one IP family: upstream's pkg/proxy/ipvs Proxier.syncProxyRules flow around
 * the pure pieces of this package — the desired state (state/), the kernel target with graceful
 * termination (kernel-target.ts), the restore batches (batch/) and the iptables skeleton
 * (iptables/) — on core's one sync engine (SyncingProxier), like the other backends.
 *
 * Every sync reads the kernel back (`ipvsadm --save -n`, `ipset save`, kube-ipvs0's addresses) and
 * writes only the difference, one process per tool: `ipset restore`, `iptables-restore` (only when
 * the skeleton's text changed or a flush was noticed), `ipvsadm --restore`, `ip -batch`. A sync
 * whose state did not change writes nothing. Because the read-back is the truth, whatever someone
 * else changed (a flushed set, a deleted virtual server, an unbound VIP) is repaired by the next
 * periodic sync (--ipvs-sync-period, upstream's maxInterval); iptables flushes are noticed by core's
 * flush monitor, which checks the jumps and every rule of the skeleton once per sync period.
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
import { buildDesiredIpvsState } from '../state/build-desired-state.js';
import { ipsetCatalogue } from '../state/ipset-catalogue.js';
import type { DesiredIpvsState, IpsetState, VirtualServer } from '../state/ipvs-state.js';
import { dryRunKernelText } from './dry-run-output.js';
import type { HostSetup } from './host-setup.js';
import { kernelTarget } from './kernel-target.js';
import { hostAddresses } from './node-addresses.js';

/** Upstream's burstSyncs for the IPVS runner. */
/** Counters of one proxier (the IPVS mode metrics and the specs read them). */
/** Counters of one proxier beyond the engine's SyncStats (every IPVS sync is a full one). */
export interface IpvsProxierStats extends SyncStats {
  iptablesRestores: number;
  restoreFailures: number;
  flushesDetected: number;
  lastWrites: { ipvsadm: number; ipset: number; iptables: number; link: number };
  virtualServers: number;
  realServers: number;
  terminatingRealServers: number;
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
      // Upstream's IPVS runner: at least every syncPeriod (each sync is a full read-back and repair).
      maxSyncIntervalMs: syncPeriodMs,
      alwaysFull: true,
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
    if (resync && this.state.isInitialized()) this.sync();
  }

  /**
   * The node's addresses, any family, unfiltered (node-port-ips.ts filters): a real run's interfaces
   * but kube-ipvs0 (upstream's GetAllLocalAddressesExcept); a dry run's Node object (node-addresses.ts).
   */
  private localAddresses(): string[] {
    if (!this.context.dryRun) return hostAddresses(this.networkInterfaces);
    return this.nodePortInterfaces.describedAddresses();
  }

  private desiredState(): DesiredIpvsState {
    const config = this.context.config;
    const localAddresses = this.localAddresses();
    return buildDesiredIpvsState(this.state.serviceMap, this.state.endpointsMap, {
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
    });
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

  /** The trackers were drained; every sync is a full one, so the retry repairs everything. */
  protected override afterSync(succeeded: boolean): void {
    if (!succeeded) this.appliedIptables = null;
  }

  /**
   * The datapath step: the desired state, the kernel read back, and only the difference written:
   * ipsets, the iptables skeleton, IPVS, kube-ipvs0 (in that order, see the top of this file).
   */
  protected async syncOnce(_request: SyncRequest): Promise<SyncResult> {
    await this.hostSetup?.ensure();
    const desired = this.desiredState();
    this.reportSkipped(desired.skippedAddresses ?? []);

    // Read the kernel back: what it holds is what we diff against.
    const [current, sets, bound] = await Promise.all([
      this.kernel.readVirtualServers(this.family),
      this.kernel.readIpsets(),
      this.kernel.readBoundAddresses(this.family),
    ]);
    const currentState: DesiredIpvsState = { family: this.family, virtualServers: current, bindAddresses: bound ?? [], ipsets: [] };
    const ipsetScript = await this.applyIpsets(currentState, sets, desired);
    const iptablesLines = await this.applyIptables(desired);
    if (iptablesLines === null) return { outcome: 'failed' };
    const { target, ipvsBatch } = await this.applyIpvs(currentState, desired);
    const linkWrites = await this.applyBindings(desired, bound);

    Object.assign(this.stats, {
      lastWrites: { ipvsadm: lineCount(ipvsBatch), ipset: lineCount(ipsetScript), iptables: iptablesLines, link: linkWrites },
      virtualServers: target.virtualServers.length,
      realServers: target.virtualServers.reduce((n, vs: VirtualServer) => n + vs.realServers.length, 0),
      terminatingRealServers: target.terminating.length,
    });
    if (target.terminating.length > 0) this.logger.verbose('Real servers in graceful termination', { realServers: target.terminating });
    return {
      outcome: 'synced',
      noLocalEndpoints: desired.noLocalEndpoints ?? { internal: 0, external: 0 },
      ...(this.dryRunTables ? { dryRunOutput: [await dryRunKernelText(this.kernel, this.family, this.dryRunTables.saveAll(['filter', 'nat']))] } : {}),
    };
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
  private async applyIptables(desired: DesiredIpvsState): Promise<number | null> {
    const skeleton = this.renderIptables(desired);
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
