import { networkInterfaces as osNetworkInterfaces } from 'node:os';
import type {
  AppliedChanges,
  Clock,
  CommandExecutor,
  EndpointsMap,
  IPFamily,
  LocalTrafficDetector,
  Logger,
  ProxyContext,
  ServicePortMap,
  Sysctl,
} from '@kube-proxy/core';
import {
  BoundedFrequencyRunner,
  ConntrackCleaner,
  ProxierBase,
  parseDuration,
  NodePortInterfaces,
  parseNodePortAddresses,
  resolveNodePortAddresses,
  localDetectorAfterNodeEvent,
  selectLocalDetector,
  topologyGates,
  type InMemoryTables,
  type NetworkInterfaces,
  type NodePortAddresses,
  type TopologyGates,
} from '@kube-proxy/core';
import { chainsFromSave, extractLines, IptablesRestoreError, writeDryRunBlock, type IptablesInterface } from '@kube-proxy/core';
import type { RenderResult } from '../render/index.js';
import {
  AppliedChainMemo,
  ChainNameCache,
  JUMP_CHAINS,
  jumpRuleArgs,
  KUBELET_JUMP_CHAINS,
  LARGE_CLUSTER_ENDPOINTS_THRESHOLD,
  renderRuleset,
} from '../render/index.js';
import { CanaryMonitor } from './canary-monitor.js';
import { NftScaleWarning } from './nft-scale-warning.js';
import { expectedRules } from './expected-rules.js';
import type { V1Node } from './k8s-types.js';
import { reportSuccessfulSync, type SyncObservers } from './sync-reporting.js';
import { ownerOfRestoreLine } from './restore-line-owner.js';
import type { NfacctCounters, NfacctPresence } from '../nfacct/index.js';

/** Upstream's proxyutil.FullSyncPeriod: a full resync at least this often. */
export const FULL_SYNC_PERIOD_MS = 60 * 60 * 1000;
/** Upstream's burstSyncs. */
export const BURST_SYNCS = 2;
/** Service ports one sync may leave out after iptables-restore refused a line of theirs (each costs a retried full sync). */
export const MAX_QUARANTINED_PER_SYNC = 8;

export const SYSCTL_ROUTE_LOCALNET = 'net/ipv4/conf/all/route_localnet';
export const SYSCTL_NF_CONNTRACK_TCP_BE_LIBERAL = 'net/netfilter/nf_conntrack_tcp_be_liberal';

/** Counters of one proxier: the source of the iptables-mode metrics (see sync-reporting.ts). */
export interface IptablesProxierStats {
  /** Successful syncs (full + partial). */
  syncs: number;
  fullSyncs: number;
  partialSyncs: number;
  /** sync_proxy_rules_iptables_restore_failures_total */
  restoreFailures: number;
  /** sync_proxy_rules_iptables_partial_restore_failures_total */
  partialRestoreFailures: number;
  /** Service ports left out of a retry because iptables-restore refused a line written for them. */
  quarantinedServicePorts: number;
  /** Failed syncs for any reason (jump rules, restore, unexpected errors). */
  failedSyncs: number;
  /** Flushes the canary monitor detected. */
  flushesDetected: number;
  /** Duration of the last sync attempt (ms, by the injected clock). */
  lastSyncDurationMs: number;
  /** When the last successful sync finished (ms since epoch), 0 before the first. */
  lastSuccessfulSyncTime: number;
  /** sync_proxy_rules_iptables_last{table}: rules written (in the restore input) in the last successful sync. */
  filterRulesLast: number;
  natRulesLast: number;
  /** sync_proxy_rules_iptables_total{table}: rules in kube-proxy's chains after the last successful sync. */
  filterRulesTotal: number;
  natRulesTotal: number;
  /** Top-level chains the last successful (partial) sync left out as unchanged. */
  elidedChainsLast: number;
  staleChainsDeleted: number;
  /** sync_proxy_rules_no_local_endpoints_total */
  noLocalEndpoints: { internal: number; external: number };
  largeClusterMode: boolean;
}

export interface IptablesProxierOptions {
  readonly family: IPFamily;
  readonly context: ProxyContext;
  readonly iptables: IptablesInterface;
  readonly executor: CommandExecutor;
  readonly sysctl: Sysctl;
  readonly clock: Clock;
  readonly logger: Logger;
  /** os.networkInterfaces, injected for tests. */
  readonly networkInterfaces?: NetworkInterfaces;
  /** --dry-run: the in-memory tables behind `iptables`, printed to context.dryRunSink after each sync. */
  readonly dryRunTables?: InMemoryTables;
  /** Append the family to the dry-run header (two proxiers share one sink). */
  readonly tagDryRunOutput?: boolean;
  /** Health updater, metrics and service health server, when the host app provides them. */
  readonly observers?: SyncObservers;
  /**
   * The nfacct counters (shared by both families' proxiers); ensured on every full sync, and the
   * rules match on those that exist. Absent (e.g. --dry-run): rules without nfacct matches.
   */
  readonly nfacct?: NfacctCounters;
}

/** `namespace/name` of a service port key `namespace/name:port`. */
function namespacedNameOf(key: string): string {
  const colon = key.indexOf(':');
  return colon < 0 ? key : key.slice(0, colon);
}

function withoutKeys(serviceMap: ServicePortMap, keys: ReadonlySet<string>): ServicePortMap {
  const out = new Map(serviceMap);
  for (const key of keys) out.delete(key);
  return out;
}

function countEndpoints(serviceMap: ServicePortMap, endpointsMap: EndpointsMap): number {
  let total = 0;
  for (const key of serviceMap.keys()) total += endpointsMap.get(key)?.length ?? 0;
  return total;
}

/**
 * The iptables proxier of one IP family: upstream's pkg/proxy/iptables Proxier.syncProxyRules flow
 * around the pure renderer — jump rules, full/partial syncs, stale-chain deletion, one
 * iptables-restore per sync, retry and full resync after failures, canary-driven resync after a
 * flush, conntrack cleanup, and --dry-run output.
 */
export class IptablesProxier extends ProxierBase {
  readonly stats: IptablesProxierStats = {
    syncs: 0,
    fullSyncs: 0,
    partialSyncs: 0,
    restoreFailures: 0,
    partialRestoreFailures: 0,
    quarantinedServicePorts: 0,
    failedSyncs: 0,
    flushesDetected: 0,
    lastSyncDurationMs: 0,
    lastSuccessfulSyncTime: 0,
    filterRulesLast: 0,
    natRulesLast: 0,
    filterRulesTotal: 0,
    natRulesTotal: 0,
    elidedChainsLast: 0,
    staleChainsDeleted: 0,
    noLocalEndpoints: { internal: 0, external: 0 },
    largeClusterMode: false,
  };

  private readonly context: ProxyContext;
  private readonly iptables: IptablesInterface;
  private readonly sysctl: Sysctl;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly networkInterfaces: NetworkInterfaces;
  /** The machine's interfaces, or in --dry-run this node's Node object addresses (core's NodePortInterfaces). */
  private readonly nodePortInterfaces: NodePortInterfaces;
  private readonly dryRunTables: InMemoryTables | undefined;
  private readonly tagDryRunOutput: boolean;
  protected readonly runner: BoundedFrequencyRunner;
  private readonly canary: CanaryMonitor;
  private readonly conntrack: ConntrackCleaner | undefined;
  private readonly names = new ChainNameCache();
  /**
   * What the last successful restore left in the top-level chains, so partial syncs can leave the
   * unchanged ones out. It must never be ahead of the kernel: committed only after a successful
   * restore, cleared on every failure and every full-sync request (canary flush, detector change),
   * and an update rendered before a clear() is refused by commit().
   */
  private readonly appliedChains = new AppliedChainMemo();
  private readonly syncPeriodMs: number;
  private readonly nodePortAddresses: NodePortAddresses;
  private readonly localhostNodePorts: boolean;
  /** --feature-gates that core's topology reads (PreferSameTrafficDistribution). */
  private readonly topologyGates: TopologyGates;
  private readonly nfacct: NfacctCounters | undefined;
  /** Which nfacct counters existed at this proxier's last full sync: every sync until the next renders with it. */
  private nfacctPresence: NfacctPresence | undefined;
  private localDetector: LocalTrafficDetector;
  private conntrackTCPLiberal = false;
  private readonly nftScale: NftScaleWarning;

  private needFullSync = true;
  /**
   * Service ports iptables-restore refused a line of (keys): rendered without them until their
   * Service or endpoints change or the next full sync, so one port cannot stop every other's rules.
   */
  private readonly quarantined = new Set<string>();
  /** A full sync has ensured the jump rules (from then on the flush monitor looks for them). */
  private jumpRulesEnsured = false;
  /** Counts full-sync requests, so one arriving during a sync is not cleared by that sync's success. */
  private fullSyncRequests = 0;
  private lastFullSync = Number.NEGATIVE_INFINITY;
  private lastIPTablesCleanup = Number.NEGATIVE_INFINITY;
  private initialization: Promise<void> | undefined;

  constructor(options: IptablesProxierOptions) {
    const { family, context } = options;
    const logger = options.logger.child({ ipFamily: family });
    super({ mode: 'iptables', family, nodeName: context.nodeName, logger, observers: options.observers });
    const config = context.config;
    this.context = context;
    this.iptables = options.iptables;
    this.sysctl = options.sysctl;
    this.clock = options.clock;
    this.logger = logger;
    this.networkInterfaces = options.networkInterfaces ?? osNetworkInterfaces;
    this.nodePortInterfaces = new NodePortInterfaces(context, this.networkInterfaces);
    this.dryRunTables = options.dryRunTables;
    this.tagDryRunOutput = options.tagDryRunOutput ?? false;
    this.syncPeriodMs = parseDuration(config.iptables.syncPeriod);
    const minSyncPeriodMs = parseDuration(config.iptables.minSyncPeriod);

    this.nodePortAddresses = parseNodePortAddresses(
      config.nodePortAddresses,
      family,
      context.nodeIPs[family],
      this.logger,
    );
    // Upstream: localhost NodePorts only for IPv4, and only when nodePortAddresses selects 127.0.0.0/8.
    this.localhostNodePorts =
      config.iptables.localhostNodePorts && family === 'IPv4' && this.nodePortAddresses.containsIPv4Loopback;
    this.localDetector = selectLocalDetector(config, family, undefined, this.logger);
    this.topologyGates = topologyGates(config.featureGates);
    this.nfacct = options.nfacct;
    this.nftScale = new NftScaleWarning(context.host, context.dryRun, this.logger);

    this.logger.verbose('Iptables sync params', {
      minSyncPeriodMs,
      syncPeriodMs: this.syncPeriodMs,
      burstSyncs: BURST_SYNCS,
      iptables: this.iptables.description,
    });
    this.runner = new BoundedFrequencyRunner({
      name: `iptables-sync-runner-${family}`,
      fn: () => this.syncProxyRules(),
      minIntervalMs: minSyncPeriodMs,
      maxIntervalMs: FULL_SYNC_PERIOD_MS,
      burstRuns: BURST_SYNCS,
      clock: this.clock,
      logger: this.logger,
    });
    this.canary = new CanaryMonitor({
      iptables: this.iptables,
      clock: this.clock,
      logger: this.logger,
      intervalMs: this.syncPeriodMs,
      onFlush: () => this.forceSync(),
    });
    this.conntrack = context.dryRun
      ? undefined
      : new ConntrackCleaner({ family, executor: options.executor, logger: this.logger });
  }

  // ---- Provider -------------------------------------------------------------------------------

  /** The canary's first check runs before the first sync. */
  protected override async beforeLoop(): Promise<void> {
    await this.canary.start();
  }

  protected onStop(): void {
    this.appliedChains.clear();
    this.canary.stop();
  }

  /** Called by the canary monitor: resync everything (upstream's forceSyncProxyRules). */
  forceSync(): void {
    this.stats.flushesDetected = this.canary.flushesDetected;
    this.requestFullSync();
    this.sync();
  }

  private requestFullSync(): void {
    this.needFullSync = true;
    this.fullSyncRequests++;
    // Whoever asks suspects the kernel changed under us (a flush): stop trusting the memo now,
    // which also makes a sync in flight unable to commit what it rendered.
    this.appliedChains.clear();
  }

  /** The local-traffic detector in use (changes with the Node's podCIDRs in NodeCIDR mode). */
  get currentLocalDetector(): LocalTrafficDetector {
    return this.localDetector;
  }

  /** NodeCIDR local detection follows this Node's podCIDRs. */
  protected override nodeEvent(node: V1Node, deleted: boolean): void {
    let resync = this.nodePortInterfaces.nodeEvent(node, deleted);
    const detector = localDetectorAfterNodeEvent(this.context.config, this.family, this.context.nodeName, this.localDetector, { node, deleted }, this.logger);
    if (detector !== undefined) {
      this.localDetector = detector;
      resync = true;
    }
    if (!resync) return;
    this.requestFullSync();
    if (this.state.isInitialized()) this.sync();
  }

  /** One-time host preparation before the first sync (upstream does it in NewProxier). */
  private initialize(): Promise<void> {
    this.initialization ??= (async () => {
      if (this.localhostNodePorts && !this.context.dryRun) {
        // Refer to https://issues.k8s.io/90259
        this.logger.info(
          'Setting route_localnet=1 to allow node-ports on localhost; to change this either disable iptables.localhostNodePorts (--iptables-localhost-nodeports) or set nodePortAddresses (--nodeport-addresses) to filter loopback addresses',
        );
        try {
          if ((await this.sysctl.get(SYSCTL_ROUTE_LOCALNET)) !== '1') await this.sysctl.set(SYSCTL_ROUTE_LOCALNET, '1');
        } catch (err) {
          this.logger.warn('Failed to set route_localnet; NodePorts on localhost will not work', {
            sysctl: SYSCTL_ROUTE_LOCALNET,
            error: String(err),
          });
        }
      }
      try {
        const liberal = await this.sysctl.get(SYSCTL_NF_CONNTRACK_TCP_BE_LIBERAL);
        this.conntrackTCPLiberal = liberal !== undefined && liberal !== '' && liberal !== '0';
      } catch {
        this.conntrackTCPLiberal = false;
      }
      if (this.conntrackTCPLiberal) {
        this.logger.info('nf_conntrack_tcp_be_liberal set, not installing DROP rules for INVALID packets');
      }
    })();
    return this.initialization;
  }

  /** Ensures our jump rules (e.g. PREROUTING → KUBE-SERVICES) exist. False when one could not be set up. */
  private async ensureJumpRules(): Promise<boolean> {
    // Several jumps share a target chain (KUBE-PROXY-FIREWALL from INPUT, OUTPUT and FORWARD); each
    // iptables call is a process spawn, and this runs on every full sync, so ensure each chain once.
    const ensured = new Set<string>();
    for (const jump of [...JUMP_CHAINS, ...KUBELET_JUMP_CHAINS]) {
      try {
        const key = `${jump.table}/${jump.dstChain}`;
        if (!ensured.has(key)) await this.iptables.ensureChain(jump.table, jump.dstChain);
        ensured.add(key);
      } catch (err) {
        this.logger.error('Failed to ensure chain exists', { table: jump.table, chain: jump.dstChain, error: String(err) });
        return false;
      }
      try {
        await this.iptables.ensureRule('-I', jump.table, jump.srcChain, jumpRuleArgs(jump));
      } catch (err) {
        this.logger.error('Failed to ensure chain jumps', {
          table: jump.table,
          srcChain: jump.srcChain,
          dstChain: jump.dstChain,
          error: String(err),
        });
        return false;
      }
    }
    return true;
  }

  /** upstream's syncProxyRules; run only by the BoundedFrequencyRunner. */
  private async syncProxyRules(): Promise<void> {
    if (this.stopped) return;
    // Don't sync rules till we've received services and endpoints.
    if (!this.state.isInitialized()) {
      this.logger.verbose('Not syncing iptables until Services and Endpoints have been received from master');
      return;
    }
    await this.initialize();

    const start = this.clock.now();
    const fullSyncRequestsAtStart = this.fullSyncRequests;
    if (this.state.takeTopologyChanged()) this.needFullSync = true;
    const doFullSync = this.needFullSync || start - this.lastFullSync > FULL_SYNC_PERIOD_MS;
    const applied = this.state.applyPendingChanges();
    this.observers.metrics?.serviceChangesPending(this.state.pendingServiceChanges());
    this.observers.metrics?.endpointChangesPending(this.state.pendingEndpointChanges());
    this.logger.verbose('Syncing iptables rules', { fullSync: doFullSync });

    let success = false;
    try {
      this.releaseQuarantine(doFullSync, applied);
      let outcome = await this.syncOnce(doFullSync, applied, start, fullSyncRequestsAtStart);
      // iptables-restore refused a line of one service port: the others are written at once without it.
      for (let i = 0; outcome === 'retry' && i < MAX_QUARANTINED_PER_SYNC; i++) {
        this.appliedChains.clear();
        outcome = await this.syncOnce(true, applied, start, fullSyncRequestsAtStart);
      }
      success = outcome === true;
    } catch (err) {
      this.logger.error('Unexpected error while syncing iptables rules', { error: String(err) });
    } finally {
      this.stats.lastSyncDurationMs = this.clock.now() - start;
      this.observers.metrics?.syncDuration(this.family, this.stats.lastSyncDurationMs / 1000, doFullSync ? 'full' : 'partial');
      if (!success) {
        this.stats.failedSyncs++;
        this.logger.info('Sync failed', { retryingTimeMs: this.syncPeriodMs });
        if (!this.stopped) this.runner.retryAfter(this.syncPeriodMs);
        // The change trackers were drained: only a full sync can recover. A failed restore may
        // have committed some tables and not others, so the memo knows nothing any more.
        this.needFullSync = true;
        this.appliedChains.clear();
      }
      this.logger.verbose('SyncProxyRules complete', { elapsedMs: this.stats.lastSyncDurationMs });
    }
  }

  /** A full sync tries every quarantined service port again; a partial one those whose Service changed. */
  private releaseQuarantine(full: boolean, applied: AppliedChanges): void {
    if (this.quarantined.size === 0) return;
    const changed = new Set([...applied.services.updatedServices, ...applied.endpoints.updatedServices]);
    const released = [...this.quarantined].filter((key) => full || changed.has(namespacedNameOf(key)));
    for (const key of released) this.quarantined.delete(key);
    if (released.length > 0) this.logger.info('Trying again service ports iptables-restore refused before', { servicePorts: released });
  }

  private async syncOnce(
    doFullSync: boolean,
    applied: AppliedChanges,
    start: number,
    fullSyncRequestsAtStart: number,
  ): Promise<boolean | 'retry'> {
    if (doFullSync) {
      // Not part of the restore, so that other rules in PREROUTING etc. are left alone. Only on full
      // syncs: at start, after a failure, and after the canary saw a flush.
      if (!(await this.ensureJumpRules())) return false;
      this.jumpRulesEnsured = true;
      // Upstream ensures its nfacct counters at the same point; a missing one is left out of the rules.
      if (this.nfacct) this.nfacctPresence = await this.nfacct.ensure();
    }

    const serviceMap = this.state.serviceMap;
    const endpointsMap = this.state.endpointsMap;
    const largeClusterMode = countEndpoints(serviceMap, endpointsMap) > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;

    // Delete chains no longer in use. iptables-save can take seconds on hosts with lots of rules,
    // so in large clusters this happens at most once per syncPeriod (stale chains are harmless).
    let existingNatChains: ReadonlySet<string> | null = null;
    if (!largeClusterMode || start - this.lastIPTablesCleanup > this.syncPeriodMs) {
      try {
        existingNatChains = chainsFromSave(await this.iptables.saveTable('nat'));
        this.lastIPTablesCleanup = start;
      } catch (err) {
        this.logger.error('Failed to execute iptables-save: stale chains will not be deleted', { error: String(err) });
      }
    }

    let changedServices: Set<string> | null = null;
    if (!doFullSync) {
      changedServices = new Set(applied.services.updatedServices);
      for (const name of applied.endpoints.updatedServices) changedServices.add(name);
    }

    const nodePortAddresses = resolveNodePortAddresses(this.nodePortAddresses, this.nodePortInterfaces.interfaces());
    const renderedMap = this.quarantined.size === 0 ? serviceMap : withoutKeys(serviceMap, this.quarantined);
    const result: RenderResult = renderRuleset(
      { serviceMap: renderedMap, endpointsMap, changedServices, existingNatChains, appliedChains: this.appliedChains },
      {
        family: this.family,
        nodeName: this.context.nodeName,
        nodeIP: this.context.nodeIPs[this.family] ?? null,
        masqueradeBit: this.context.config.iptables.masqueradeBit,
        masqueradeAll: this.context.config.iptables.masqueradeAll,
        localhostNodePorts: this.localhostNodePorts,
        randomFully: this.context.host.iptablesRandomFully,
        localDetector: this.localDetector,
        nodePortAddresses,
        nodeLabels: this.state.nodeLabels,
        conntrackTCPLiberal: this.conntrackTCPLiberal,
        topologyGates: this.topologyGates,
        ...(this.nfacctPresence ? { nfacct: this.nfacctPresence } : {}),
      },
      this.names,
    );

    this.logger.verbose('Reloading service iptables data', {
      numServices: serviceMap.size,
      numEndpoints: result.totalEndpoints,
      numFilterRules: result.filterRuleCount,
      numNATChains: result.natChainCount,
      numNATRules: result.natRuleCount,
      numElidedChains: result.elidedChains.length,
    });

    const restoreRules = result.filterRuleCount + result.natRuleCount;
    this.nftScale.beforeRestore(restoreRules);
    const restoreStart = this.clock.now();
    try {
      // NOTE: --noflush so that non-kubernetes chains in the tables are left alone.
      // The chunks when the runner takes them: no joined copy of an ~18 MB payload at 10k services.
      const restoreOptions = { noFlush: true, counters: true, wholeTables: doFullSync };
      if (this.iptables.restoreChunks) await this.iptables.restoreChunks(result.payloadChunks, restoreOptions);
      else await this.iptables.restore(result.payload, restoreOptions);
      this.nftScale.afterRestore(restoreRules, this.clock.now() - restoreStart);
    } catch (err) {
      this.nftScale.afterRestore(restoreRules, this.clock.now() - restoreStart);
      this.stats.restoreFailures++;
      if (!doFullSync) this.stats.partialRestoreFailures++;
      this.observers.metrics?.iptablesRestoreFailed(this.family, !doFullSync);
      const outcome = this.restoreFailed(err, result.payload, renderedMap, endpointsMap);
      this.names.renderBuffers.release();
      return outcome;
    }
    // The kernel now holds what was rendered (refused if the memo was cleared meanwhile).
    if (result.appliedChainUpdate !== null) this.appliedChains.commit(result.appliedChainUpdate);
    // Nothing reads the payload from here on: give its memory back rather than keep it until the next sync.
    this.names.renderBuffers.release();

    // A full sync asked for while this one ran (canary, local detector) still has to happen.
    this.needFullSync = this.fullSyncRequests !== fullSyncRequestsAtStart;
    // What the flush monitor looks for until the next sync: only when no full sync is pending (a
    // flush noticed during this sync would otherwise be "noticed" again before it is repaired).
    if (!this.needFullSync) {
      this.canary.setExpectedRules(expectedRules(this.jumpRulesEnsured, this.appliedChains));
    }
    if (doFullSync) this.lastFullSync = start;
    const now = this.clock.now();
    Object.assign(this.stats, {
      syncs: this.stats.syncs + 1,
      fullSyncs: this.stats.fullSyncs + (doFullSync ? 1 : 0),
      partialSyncs: this.stats.partialSyncs + (doFullSync ? 0 : 1),
      lastSuccessfulSyncTime: now,
      filterRulesLast: result.filterRuleCount,
      natRulesLast: result.natRuleCount,
      filterRulesTotal: result.filterRuleCountTotal,
      natRulesTotal: result.natRuleCountTotal,
      elidedChainsLast: result.elidedChains.length,
      staleChainsDeleted: result.staleChainsDeleted,
      noLocalEndpoints: { ...result.noLocalEndpoints },
      largeClusterMode: result.largeClusterMode,
    });

    const healthChecks = { services: this.state.healthCheckNodePorts(), localEndpoints: this.state.localReadyEndpoints() };
    await reportSuccessfulSync(this.observers, this.family, this.stats, applied, now, healthChecks, this.logger);

    // Finish housekeeping: clear stale conntrack entries for UDP services.
    if (this.conntrack) await this.conntrack.cleanStaleEntries(serviceMap, applied);

    await this.writeDryRunOutput(doFullSync, now);
    if (!this.first.settled) this.first.resolve();
    return true;
  }

  /**
   * Logs a refused restore. When the line iptables-restore names was written for one service port,
   * that port is quarantined and 'retry' asks for the others to be written at once without it.
   */
  private restoreFailed(err: unknown, payload: string, serviceMap: ServicePortMap, endpointsMap: EndpointsMap): false | 'retry' {
    if (!(err instanceof IptablesRestoreError) || err.line === undefined) {
      this.logger.error('Failed to execute iptables-restore', { error: String(err) });
      return false;
    }
    const context = extractLines(payload, err.line, 3);
    const rules = context.map((l) => `${l.line}: ${l.text}`);
    const failing = context.find((l) => l.line === err.line)?.text ?? '';
    const owner = ownerOfRestoreLine(failing, serviceMap, endpointsMap);
    if (owner === undefined || this.quarantined.has(owner)) {
      this.logger.error('Failed to execute iptables-restore', { error: err.message, line: err.line, rules });
      return false;
    }
    this.quarantined.add(owner);
    this.stats.quarantinedServicePorts++;
    this.logger.error('iptables-restore refused the rules of a service port; programming the others without it', {
      service: namespacedNameOf(owner),
      servicePort: owner,
      error: err.message,
      line: err.line,
      rules,
    });
    return 'retry';
  }

  private async writeDryRunOutput(full: boolean, now: number): Promise<void> {
    if (!this.context.dryRun || !this.dryRunTables) return;
    const tag = this.tagDryRunOutput ? ` ${this.family}` : '';
    const header = `# sync ${this.stats.syncs} ${full ? 'full' : 'partial'} ${new Date(now).toISOString()}${tag}\n`;
    // In pieces, waiting for stdout between them: at 10k services the tables print as ~16 MB
    // (see writeDryRunBlock). The tables do not change meanwhile: this sync is not over yet.
    const tables = this.dryRunTables;
    await writeDryRunBlock(this.context.dryRunSink, (function* () {
      yield header;
      let wrote = false;
      for (const piece of tables.savePieces(['filter', 'nat'])) {
        wrote = true;
        yield piece;
      }
      if (!wrote) yield '\n';
    })());
  }

}
