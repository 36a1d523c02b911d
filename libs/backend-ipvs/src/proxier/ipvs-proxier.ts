/**
 * The IPVS proxier of one IP family: upstream's pkg/proxy/ipvs Proxier.syncProxyRules flow around
 * the pure pieces of this package — the desired state (state/), the kernel target with graceful
 * termination (kernel-target.ts), the restore batches (batch/) and the iptables skeleton
 * (iptables/) — on core's ProxierBase and BoundedFrequencyRunner, like the other backends.
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
import type { AppliedChanges, Clock, CommandExecutor, IPFamily, IptablesInterface, Logger, ProxyContext, RuleSpec, Table } from '@kube-proxy/core';
import {
  BoundedFrequencyRunner,
  ConntrackCleaner,
  IptablesFlushMonitor,
  NodePortInterfaces,
  ProxierBase,
  parseCIDR,
  parseDuration,
  parseNodePortAddresses,
  resolveNodePortAddresses,
  localDetectorAfterNodeEvent,
  selectLocalDetector,
  tokenize,
  topologyGates,
  type InMemoryTables,
  type LocalTrafficDetector,
  type NetworkInterfaces,
  type NodePortAddresses,
  type ProxierObservers,
  type TopologyGates,
  type V1Node,
} from '@kube-proxy/core';
import { diffIpset, diffIpvsadm } from '../batch/diff-batches.js';
import { createSetLine } from '../batch/ipset-text.js';
import { checkedBatch } from '../batch/render-batches.js';
import { IPVS_IPTABLES_JUMPS, renderIpvsIptables, type IpvsIptablesPayload } from '../iptables/index.js';
import type { IpvsKernel } from '../kernel/ipvs-kernel.js';
import { buildDesiredIpvsState } from '../state/build-desired-state.js';
import { ipsetCatalogue } from '../state/ipset-catalogue.js';
import type { DesiredIpvsState, IpsetState, VirtualServer } from '../state/ipvs-state.js';
import { dryRunSyncText } from './dry-run-output.js';
import type { HostSetup } from './host-setup.js';
import { kernelTarget } from './kernel-target.js';
import { hostAddresses } from './node-addresses.js';

/** Upstream's burstSyncs for the IPVS runner. */
export const IPVS_BURST_SYNCS = 2;

/** Counters of one proxier (the IPVS mode metrics and the specs read them). */
export interface IpvsProxierStats {
  syncs: number;
  failedSyncs: number;
  iptablesRestores: number;
  restoreFailures: number;
  flushesDetected: number;
  /** Lines written by the last successful sync, per tool (0: nothing to change). */
  lastWrites: { ipvsadm: number; ipset: number; iptables: number; link: number };
  virtualServers: number;
  realServers: number;
  /** Real servers kept at weight 0 until their connections end. */
  terminatingRealServers: number;
  lastSyncDurationMs: number;
  lastSuccessfulSyncTime: number;
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

export class IpvsProxier extends ProxierBase {
  readonly stats: IpvsProxierStats = {
    syncs: 0,
    failedSyncs: 0,
    iptablesRestores: 0,
    restoreFailures: 0,
    flushesDetected: 0,
    lastWrites: { ipvsadm: 0, ipset: 0, iptables: 0, link: 0 },
    virtualServers: 0,
    realServers: 0,
    terminatingRealServers: 0,
    lastSyncDurationMs: 0,
    lastSuccessfulSyncTime: 0,
  };

  protected readonly runner: BoundedFrequencyRunner;
  private readonly context: ProxyContext;
  private readonly kernel: IpvsKernel;
  private readonly iptables: IptablesInterface;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly hostSetup: HostSetup | undefined;
  private readonly networkInterfaces: NetworkInterfaces;
  private readonly dryRunTables: InMemoryTables | undefined;
  private readonly tagDryRunOutput: boolean;
  private readonly syncPeriodMs: number;
  private readonly nodePortAddresses: NodePortAddresses;
  private readonly topologyGates: TopologyGates;
  private readonly excludeCIDRs: readonly string[];
  private readonly flushMonitor: IptablesFlushMonitor;
  private readonly conntrack: ConntrackCleaner | undefined;
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
    const logger = options.logger.child({ ipFamily: family });
    super({ mode: 'ipvs', family, nodeName: context.nodeName, logger, observers: options.observers });
    const config = context.config;
    this.context = context;
    this.kernel = options.kernel;
    this.iptables = options.iptables;
    this.clock = options.clock;
    this.logger = logger;
    this.hostSetup = options.hostSetup;
    this.networkInterfaces = options.networkInterfaces ?? osNetworkInterfaces;
    this.nodePortInterfaces = new NodePortInterfaces(context, this.networkInterfaces);
    this.dryRunTables = options.dryRunTables;
    this.tagDryRunOutput = options.tagDryRunOutput ?? false;
    this.syncPeriodMs = parseDuration(config.ipvs.syncPeriod);
    const minSyncPeriodMs = parseDuration(config.ipvs.minSyncPeriod);
    this.nodePortAddresses = parseNodePortAddresses(config.nodePortAddresses, family, context.nodeIPs[family], logger);
    this.topologyGates = topologyGates(config.featureGates);
    this.localDetector = selectLocalDetector(config, family, undefined, logger);
    this.excludeCIDRs = (config.ipvs.excludeCIDRs ?? []).filter((c) => parseCIDR(c)?.family === family);
    this.logger.verbose('IPVS sync params', { minSyncPeriodMs, syncPeriodMs: this.syncPeriodMs, burstSyncs: IPVS_BURST_SYNCS });
    // Upstream's IPVS runner: at least every syncPeriod (each sync is a full read-back and repair).
    this.runner = new BoundedFrequencyRunner({
      name: `ipvs-sync-runner-${family}`,
      fn: () => this.syncProxyRules(),
      minIntervalMs: minSyncPeriodMs,
      maxIntervalMs: this.syncPeriodMs,
      burstRuns: IPVS_BURST_SYNCS,
      clock: this.clock,
      logger: this.logger,
    });
    this.flushMonitor = new IptablesFlushMonitor({
      iptables: this.iptables,
      clock: this.clock,
      logger: this.logger,
      intervalMs: this.syncPeriodMs,
      tables: ['nat', 'filter'],
      subject: 'IPVS-mode iptables rules',
      onFlush: () => {
        this.stats.flushesDetected++;
        this.appliedIptables = null;
        this.jumpsEnsured = false;
        this.sync();
      },
    });
    this.conntrack = context.dryRun ? undefined : new ConntrackCleaner({ family, executor: options.executor, logger: this.logger });
  }

  protected override async beforeLoop(): Promise<void> {
    if (!this.context.dryRun) await this.flushMonitor.start();
  }

  protected onStop(): void {
    this.flushMonitor.stop();
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

  /** upstream's syncProxyRules; run only by the runner. */
  private async syncProxyRules(): Promise<void> {
    if (this.stopped) return;
    if (!this.state.isInitialized()) {
      this.logger.verbose('Not syncing ipvs rules until Services and Endpoints have been received from master');
      return;
    }
    const start = this.clock.now();
    let success = false;
    try {
      await this.hostSetup?.ensure();
      success = await this.syncOnce();
    } catch (err) {
      this.logger.error('Failed to sync IPVS rules', { error: err instanceof Error ? err.message : String(err) });
    } finally {
      this.stats.lastSyncDurationMs = this.clock.now() - start;
      this.observers.metrics?.syncDuration(this.family, this.stats.lastSyncDurationMs / 1000);
      if (!success) {
        this.stats.failedSyncs++;
        // The trackers were drained; every sync is a full one, so the retry repairs everything.
        this.appliedIptables = null;
        if (!this.stopped) this.runner.retryAfter(this.syncPeriodMs);
      }
      this.logger.verbose('syncProxyRules complete', { elapsedMs: this.stats.lastSyncDurationMs });
    }
  }

  private async syncOnce(): Promise<boolean> {
    const applied = this.state.applyPendingChanges();
    this.state.takeTopologyChanged();
    this.observers.metrics?.serviceChangesPending(this.state.pendingServiceChanges());
    this.observers.metrics?.endpointChangesPending(this.state.pendingEndpointChanges());
    const desired = this.desiredState();
    this.reportSkipped(desired.skippedAddresses ?? []);

    // Read the kernel back: what it holds is what we diff against.
    const [current, sets, bound] = await Promise.all([
      this.kernel.readVirtualServers(this.family),
      this.kernel.readIpsets(),
      this.kernel.readBoundAddresses(this.family),
    ]);

    // 1. ipsets: create what is missing, then entries by difference (never flushed while referenced).
    const currentSets: IpsetState[] = [];
    const creates: string[] = [];
    for (const def of ipsetCatalogue(this.family)) {
      const entries = sets.get(def.name);
      if (entries === undefined) creates.push(createSetLine(def));
      currentSets.push({ set: def, entries: entries ?? [] });
    }
    const currentState: DesiredIpvsState = { family: this.family, virtualServers: current, bindAddresses: bound ?? [], ipsets: currentSets };
    const ipsetScript = checkedBatch(creates) + diffIpset(currentState, desired);
    await this.kernel.applyIpset(ipsetScript);

    // 2. iptables skeleton: one iptables-restore, only when its text changed (or after a flush).
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
      this.flushMonitor.clearExpectedRules();
      try {
        await this.iptables.restore(skeleton.payload, { noFlush: true, counters: true });
      } catch (err) {
        this.stats.restoreFailures++;
        this.observers.metrics?.iptablesRestoreFailed(this.family, false);
        this.logger.error('Failed to execute iptables-restore', { error: err instanceof Error ? err.message : String(err) });
        return false;
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
    this.flushMonitor.setExpectedRules(expected);

    // 3. IPVS: the target with graceful termination, as one ipvsadm --restore batch.
    const target = await kernelTarget({
      desired: desired.virtualServers,
      current,
      excludeCIDRs: this.excludeCIDRs,
      connections: () => this.kernel.readConnections(),
    });
    const ipvsBatch = diffIpvsadm(currentState, { ...desired, virtualServers: target.virtualServers });
    await this.kernel.applyIpvsadm(ipvsBatch);
    for (const name of target.drained) this.logger.verbose('Deleted a drained real server', { realServer: name });

    // 4. kube-ipvs0: bind every VIP, unbind the rest (upstream removes superfluous addresses).
    const want = new Set(desired.bindAddresses);
    const have = new Set(bound ?? []);
    const add = desired.bindAddresses.filter((a) => !have.has(a));
    const remove = [...have].filter((a) => !want.has(a)).sort();
    await this.kernel.applyLinkChanges({ createLink: bound === null, add, remove });

    // Bookkeeping, health, metrics, conntrack, dry-run output.
    const now = this.clock.now();
    Object.assign(this.stats, {
      syncs: this.stats.syncs + 1,
      lastWrites: { ipvsadm: lineCount(ipvsBatch), ipset: lineCount(ipsetScript), iptables: iptablesLines, link: add.length + remove.length + (bound === null ? 1 : 0) },
      virtualServers: target.virtualServers.length,
      realServers: target.virtualServers.reduce((n, vs: VirtualServer) => n + vs.realServers.length, 0),
      terminatingRealServers: target.terminating.length,
      lastSuccessfulSyncTime: now,
    });
    if (target.terminating.length > 0) {
      this.logger.verbose('Real servers in graceful termination', { realServers: target.terminating });
    }
    await this.report(applied, now, desired.noLocalEndpoints ?? { internal: 0, external: 0 });
    if (this.conntrack) await this.conntrack.cleanStaleEntries(this.state.serviceMap, applied);
    await this.writeDryRunOutput(now);
    if (!this.first.settled) this.first.resolve();
    return true;
  }

  /** Upstream logs each refused netlink call every sync; once per change is enough to find the object. */
  private reportSkipped(skipped: readonly string[]): void {
    const key = skipped.join('\n');
    if (key === this.reportedSkipped) return;
    this.reportedSkipped = key;
    if (skipped.length > 0) this.logger.warn('Left out addresses the kernel refuses in IPVS mode', { skipped });
  }

  /** What upstream publishes after a successful sync: latencies, health, health-check services. */
  private async report(applied: AppliedChanges, now: number, noLocal: { internal: number; external: number }): Promise<void> {
    const { metrics, health, serviceHealth } = this.observers;
    if (metrics) {
      for (const times of applied.endpoints.lastChangeTriggerTimes.values()) {
        for (const t of times) metrics.networkProgrammingLatency(this.family, (now - t) / 1000);
      }
      metrics.noLocalEndpoints(this.family, noLocal);
    }
    health?.updated(this.family);
    metrics?.syncSucceeded(this.family);
    if (serviceHealth) {
      try {
        await serviceHealth.syncServices(this.state.healthCheckNodePorts(), this.family);
        await serviceHealth.syncEndpoints(this.state.localReadyEndpoints(), this.family);
      } catch (err) {
        this.logger.error('Error syncing healthcheck services', { err: String(err) });
      }
    }
  }

  private async writeDryRunOutput(now: number): Promise<void> {
    if (!this.context.dryRun || !this.dryRunTables) return;
    const text = await dryRunSyncText(this.kernel, {
      family: this.family,
      syncNumber: this.stats.syncs,
      time: now,
      tagFamily: this.tagDryRunOutput,
      iptablesSave: this.dryRunTables.saveAll(['filter', 'nat']),
    });
    this.context.dryRunSink.write(text);
  }
}
