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
import { ConntrackCleaner, BURST_SYNCS, newSyncStats, SyncingProxier, parseDuration, NodePortInterfaces, parseNodePortAddresses, resolveNodePortAddresses, localDetectorAfterNodeEvent, selectLocalDetector, topologyGates, type NetworkInterfaces, type NodePortAddresses, type ProxierObservers, type SyncRequest, type SyncResult, type SyncStats, type TopologyGates } from '@kube-proxy/core';
import { type InMemoryTables } from '@kube-proxy/netfilter-iptables';
import { chainsFromSave, extractLines, IptablesRestoreError, type IptablesInterface } from '@kube-proxy/netfilter-iptables';
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
import { canaryFlushMonitor } from './canary-monitor.js';
import { NftScaleWarning } from './nft-scale-warning.js';
import { expectedRules } from './expected-rules.js';
import type { V1Node } from './k8s-types.js';
import type { IptablesFlushMonitor } from '@kube-proxy/netfilter-iptables';
import { ownerOfRestoreLine } from './restore-line-owner.js';
import type { NfacctCounters, NfacctPresence } from '../nfacct/index.js';


export const SYSCTL_ROUTE_LOCALNET = 'net/ipv4/conf/all/route_localnet';
export const SYSCTL_NF_CONNTRACK_TCP_BE_LIBERAL = 'net/netfilter/nf_conntrack_tcp_be_liberal';

/** Counters of one proxier beyond the engine's SyncStats: the source of the iptables-mode metrics. */
export interface IptablesProxierStats extends SyncStats {
  /** sync_proxy_rules_iptables_restore_failures_total */
  restoreFailures: number;
  /** sync_proxy_rules_iptables_partial_restore_failures_total */
  partialRestoreFailures: number;
  /** Service ports left out of a retry because iptables-restore refused a line written for them. */
  quarantinedServicePorts: number;
  /** Flushes the canary monitor detected. */
  flushesDetected: number;
  /** sync_proxy_rules_iptables_last{table}: rules written (in the restore input) in the last successful sync. */
  filterRulesLast: number;
  natRulesLast: number;
  /** sync_proxy_rules_iptables_total{table}: rules in kube-proxy's chains after the last successful sync. */
  filterRulesTotal: number;
  natRulesTotal: number;
  /** Top-level chains the last successful (partial) sync left out as unchanged. */
  elidedChainsLast: number;
  staleChainsDeleted: number;
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
  readonly observers?: ProxierObservers;
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
 * The iptables proxier of one IP family: the datapath step of upstream's pkg/proxy/iptables
 * Proxier.syncProxyRules around the pure renderer — jump rules, stale-chain deletion, the partial
 * render of changed Services, one iptables-restore per sync, the memo of unchanged chains, the
 * quarantine of a service port iptables-restore refuses, and canary-driven resync after a flush. The
 * rest of the sync (gating, full vs partial, retries, reporting, conntrack, --dry-run output) is
 * core's one sync engine (SyncingProxier).
 */
export class IptablesProxier extends SyncingProxier {
  readonly stats: IptablesProxierStats = {
    ...newSyncStats(),
    restoreFailures: 0,
    partialRestoreFailures: 0,
    quarantinedServicePorts: 0,
    flushesDetected: 0,
    filterRulesLast: 0,
    natRulesLast: 0,
    filterRulesTotal: 0,
    natRulesTotal: 0,
    elidedChainsLast: 0,
    staleChainsDeleted: 0,
    largeClusterMode: false,
  };

  private readonly context: ProxyContext;
  private readonly iptables: IptablesInterface;
  private readonly sysctl: Sysctl;
  private readonly networkInterfaces: NetworkInterfaces;
  /** The machine's interfaces, or in --dry-run this node's Node object addresses (core's NodePortInterfaces). */
  private readonly nodePortInterfaces: NodePortInterfaces;
  private readonly dryRunTables: InMemoryTables | undefined;
  private readonly canary: IptablesFlushMonitor;
  private readonly names = new ChainNameCache();
  /**
   * What the last successful restore left in the top-level chains, so partial syncs can leave the
   * unchanged ones out. It must never be ahead of the kernel: committed only after a successful
   * restore, cleared on every failure and every full-sync request (canary flush, detector change),
   * and an update rendered before a clear() is refused by commit().
   */
  private readonly appliedChains = new AppliedChainMemo();
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

  /**
   * Service ports iptables-restore refused a line of (keys): rendered without them until their
   * Service or endpoints change or the next full sync, so one port cannot stop every other's rules.
   */
  private readonly quarantined = new Set<string>();
  /** A full sync has ensured the jump rules (from then on the flush monitor looks for them). */
  private jumpRulesEnsured = false;
  private lastIPTablesCleanup = Number.NEGATIVE_INFINITY;
  private initialization: Promise<void> | undefined;

  constructor(options: IptablesProxierOptions) {
    const { family, context } = options;
    const config = context.config;
    const logger = options.logger.child({ ipFamily: family });
    super({
      mode: 'iptables',
      family,
      nodeName: context.nodeName,
      logger,
      observers: options.observers,
      clock: options.clock,
      syncPeriodMs: parseDuration(config.iptables.syncPeriod),
      minSyncPeriodMs: parseDuration(config.iptables.minSyncPeriod),
      conntrack: context.dryRun ? undefined : new ConntrackCleaner({ family, executor: options.executor, logger }),
      dryRunSink: context.dryRun && options.dryRunTables ? context.dryRunSink : undefined,
      tagDryRunOutput: options.tagDryRunOutput ?? false,
    });
    this.context = context;
    this.iptables = options.iptables;
    this.sysctl = options.sysctl;
    this.networkInterfaces = options.networkInterfaces ?? osNetworkInterfaces;
    this.nodePortInterfaces = new NodePortInterfaces(context, this.networkInterfaces);
    this.dryRunTables = options.dryRunTables;
    this.nodePortAddresses = parseNodePortAddresses(config.nodePortAddresses, family, context.nodeIPs[family], logger);
    // Upstream: localhost NodePorts only for IPv4, and only when nodePortAddresses selects 127.0.0.0/8.
    this.localhostNodePorts = config.iptables.localhostNodePorts && family === 'IPv4' && this.nodePortAddresses.containsIPv4Loopback;
    this.localDetector = selectLocalDetector(config, family, undefined, logger);
    this.topologyGates = topologyGates(config.featureGates);
    this.nfacct = options.nfacct;
    this.nftScale = new NftScaleWarning(context.host, context.dryRun, logger);
    logger.verbose('Iptables sync params', {
      minSyncPeriodMs: parseDuration(config.iptables.minSyncPeriod),
      syncPeriodMs: this.syncPeriodMs,
      burstSyncs: BURST_SYNCS,
      iptables: this.iptables.description,
    });
    // Its first check (creating the canaries) runs before the first sync.
    this.canary = canaryFlushMonitor({ iptables: this.iptables, clock: this.clock, logger, intervalMs: this.syncPeriodMs, onFlush: () => this.forceSync() });
    this.watchForFlushes(this.canary);
  }

  // ---- Provider -------------------------------------------------------------------------------

  protected override onStop(): void {
    this.appliedChains.clear();
    super.onStop();
  }

  /** Called by the canary monitor: resync everything (upstream's forceSyncProxyRules). */
  forceSync(): void {
    this.stats.flushesDetected = this.canary.flushesDetected;
    this.requestFullSync();
    this.sync();
  }

  protected override requestFullSync(): void {
    super.requestFullSync();
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

  /** A failed restore may have committed some tables and not others: the memo knows nothing any more. */
  protected override afterSync(succeeded: boolean): void {
    if (!succeeded) this.appliedChains.clear();
  }

  /**
   * The datapath step of upstream's syncProxyRules: jump rules and nfacct counters on a full sync, the
   * ruleset rendered (a partial sync only for the changed Services), one iptables-restore. A line
   * iptables-restore refuses that belongs to one service port quarantines that port ('retry').
   */
  protected async syncOnce(request: SyncRequest): Promise<SyncResult> {
    await this.initialize();
    // A retry rewrites every chain: the memo of the attempt the kernel refused is void.
    if (request.attempt === 0) this.releaseQuarantine(request.full, request.applied);
    else this.appliedChains.clear();
    if (request.full && !(await this.prepareFullSync())) return { outcome: 'failed' };

    const serviceMap = this.state.serviceMap;
    const endpointsMap = this.state.endpointsMap;
    const renderedMap = this.quarantined.size === 0 ? serviceMap : withoutKeys(serviceMap, this.quarantined);
    const existingNatChains = await this.existingNatChains(request.start, serviceMap, endpointsMap);
    const result = this.render(request, renderedMap, existingNatChains);
    try {
      await this.restore(result, request.full);
    } catch (err) {
      this.stats.restoreFailures++;
      if (!request.full) this.stats.partialRestoreFailures++;
      this.observers.metrics?.iptablesRestoreFailed(this.family, !request.full);
      const outcome = this.restoreFailed(err, result.payload, renderedMap, endpointsMap);
      this.names.renderBuffers.release();
      return { outcome };
    }
    return this.restored(result);
  }

  /**
   * Not part of the restore, so that other rules in PREROUTING etc. are left alone. Only on full
   * syncs: at start, after a failure, and after the canary saw a flush. Upstream ensures its nfacct
   * counters at the same point; a missing one is left out of the rules.
   */
  private async prepareFullSync(): Promise<boolean> {
    if (!(await this.ensureJumpRules())) return false;
    this.jumpRulesEnsured = true;
    if (this.nfacct) this.nfacctPresence = await this.nfacct.ensure();
    return true;
  }

  /**
   * The chains nat holds, so chains no longer in use are deleted. iptables-save can take seconds on
   * hosts with lots of rules, so in large clusters this happens at most once per syncPeriod (stale
   * chains are harmless). Null: not this time.
   */
  private async existingNatChains(start: number, serviceMap: ServicePortMap, endpointsMap: EndpointsMap): Promise<ReadonlySet<string> | null> {
    const largeClusterMode = countEndpoints(serviceMap, endpointsMap) > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;
    if (largeClusterMode && start - this.lastIPTablesCleanup <= this.syncPeriodMs) return null;
    try {
      const chains = chainsFromSave(await this.iptables.saveTable('nat'));
      this.lastIPTablesCleanup = start;
      return chains;
    } catch (err) {
      this.logger.error('Failed to execute iptables-save: stale chains will not be deleted', { error: String(err) });
      return null;
    }
  }

  private render(request: SyncRequest, serviceMap: ServicePortMap, existingNatChains: ReadonlySet<string> | null): RenderResult {
    let changedServices: Set<string> | null = null;
    if (!request.full) {
      changedServices = new Set(request.applied.services.updatedServices);
      for (const name of request.applied.endpoints.updatedServices) changedServices.add(name);
    }
    const nodePortAddresses = resolveNodePortAddresses(this.nodePortAddresses, this.nodePortInterfaces.interfaces());
    const result = renderRuleset(
      { serviceMap, endpointsMap: this.state.endpointsMap, changedServices, existingNatChains, appliedChains: this.appliedChains },
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
      numServices: this.state.serviceMap.size,
      numEndpoints: result.totalEndpoints,
      numFilterRules: result.filterRuleCount,
      numNATChains: result.natChainCount,
      numNATRules: result.natRuleCount,
      numElidedChains: result.elidedChains.length,
    });
    return result;
  }

  /** One iptables-restore --noflush (non-kubernetes chains in the tables are left alone). */
  private async restore(result: RenderResult, full: boolean): Promise<void> {
    const restoreRules = result.filterRuleCount + result.natRuleCount;
    this.nftScale.beforeRestore(restoreRules);
    const restoreStart = this.clock.now();
    try {
      // The chunks when the runner takes them: no joined copy of an ~18 MB payload at 10k services.
      const restoreOptions = { noFlush: true, counters: true, wholeTables: full };
      if (this.iptables.restoreChunks) await this.iptables.restoreChunks(result.payloadChunks, restoreOptions);
      else await this.iptables.restore(result.payload, restoreOptions);
    } finally {
      this.nftScale.afterRestore(restoreRules, this.clock.now() - restoreStart);
    }
  }

  /** The kernel holds what was rendered: remember it, tell the flush monitor, and say what was done. */
  private restored(result: RenderResult): SyncResult {
    // Refused if the memo was cleared meanwhile (a full sync was asked for during this one).
    if (result.appliedChainUpdate !== null) this.appliedChains.commit(result.appliedChainUpdate);
    // Nothing reads the payload from here on: give its memory back rather than keep it until the next sync.
    this.names.renderBuffers.release();
    // What the flush monitor looks for until the next sync: only when no full sync is pending (a
    // flush noticed during this sync would otherwise be "noticed" again before it is repaired).
    if (!this.fullSyncRequestedDuringSync()) this.canary.setExpectedRules(expectedRules(this.jumpRulesEnsured, this.appliedChains));
    Object.assign(this.stats, {
      filterRulesLast: result.filterRuleCount,
      natRulesLast: result.natRuleCount,
      filterRulesTotal: result.filterRuleCountTotal,
      natRulesTotal: result.natRuleCountTotal,
      elidedChainsLast: result.elidedChains.length,
      staleChainsDeleted: result.staleChainsDeleted,
      largeClusterMode: result.largeClusterMode,
    });
    const stats = this.stats;
    return {
      outcome: 'synced',
      noLocalEndpoints: result.noLocalEndpoints,
      publish: (metrics) => {
        metrics.iptablesRules(this.family, 'filter', { total: stats.filterRulesTotal, last: stats.filterRulesLast });
        metrics.iptablesRules(this.family, 'nat', { total: stats.natRulesTotal, last: stats.natRulesLast });
      },
      ...(this.dryRunTables ? { dryRunOutput: dryRunTablesText(this.dryRunTables) } : {}),
    };
  }

  /** A full sync tries every quarantined service port again; a partial one those whose Service changed. */
  private releaseQuarantine(full: boolean, applied: AppliedChanges): void {
    if (this.quarantined.size === 0) return;
    const changed = new Set([...applied.services.updatedServices, ...applied.endpoints.updatedServices]);
    const released = [...this.quarantined].filter((key) => full || changed.has(namespacedNameOf(key)));
    for (const key of released) this.quarantined.delete(key);
    if (released.length > 0) this.logger.info('Trying again service ports iptables-restore refused before', { servicePorts: released });
  }

  /**
   * Logs a refused restore. When the line iptables-restore names was written for one service port,
   * that port is quarantined and 'retry' asks for the others to be written at once without it.
   */
  private restoreFailed(err: unknown, payload: string, serviceMap: ServicePortMap, endpointsMap: EndpointsMap): 'failed' | 'retry' {
    if (!(err instanceof IptablesRestoreError) || err.line === undefined) {
      this.logger.error('Failed to execute iptables-restore', { error: String(err) });
      return 'failed';
    }
    const context = extractLines(payload, err.line, 3);
    const rules = context.map((l) => `${l.line}: ${l.text}`);
    const failing = context.find((l) => l.line === err.line)?.text ?? '';
    const owner = ownerOfRestoreLine(failing, serviceMap, endpointsMap);
    if (owner === undefined || this.quarantined.has(owner)) {
      this.logger.error('Failed to execute iptables-restore', { error: err.message, line: err.line, rules });
      return 'failed';
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
}

/**
 * --dry-run: the in-memory filter and nat tables in iptables-save form, in pieces (at 10k services
 * they print as ~16 MB). The tables do not change while they are written: the sync is not over yet.
 */
function* dryRunTablesText(tables: InMemoryTables): Generator<string> {
  let wrote = false;
  for (const piece of tables.savePieces(['filter', 'nat'])) {
    wrote = true;
    yield piece;
  }
  if (!wrote) yield '\n';
}
