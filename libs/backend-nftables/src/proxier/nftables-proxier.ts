import { networkInterfaces as osNetworkInterfaces } from 'node:os';
import type { AppliedChanges, Clock, CommandExecutor, IPFamily, LocalTrafficDetector, Logger, ProxyContext, ServicePlanContext } from '@kube-proxy/core';
import {
  BURST_SYNCS,
  ConntrackCleaner,
  newSyncStats,
  isLoopbackIP,
  localDetectorAfterNodeEvent,
  NODE_PORT_ADDRESSES_PRIMARY,
  parseDuration,
  NodePortInterfaces,
  parseNodePortAddresses,
  planServicePort,
  resolveNodePortAddresses,
  SyncingProxier,
  selectLocalDetector,
  topologyGates,
  type NetworkInterfaces,
  type NodePortAddresses,
  type ProxierObservers,
  type SyncRequest,
  type SyncResult,
  type SyncStats,
  type TopologyGates,
  type V1Node,
} from '@kube-proxy/core';
import { NftRunError, type NftInterface } from '../kernel/nft-interface.js';
import type { MemoryNftTable } from '../nft/memory-table.js';
import { familyOf, type NftFamily } from '../nft/nft-objects.js';
import { NameCache } from '../names/name-cache.js';
import { nftLocalMatch } from '../render/local-detector-nft.js';
import { assertRenderable } from '../render/render-guards.js';
import { renderServicePort, type ServicePortRender } from '../render/service-port-render.js';
import { tableSkeleton, type TableSkeleton } from '../render/table-skeleton.js';
import { STALE_CHAIN_DELAY_MS, TableSync, type SyncStep } from './table-sync.js';
import { coldStartBatches, lazyStep, type PlannedStep } from './cold-start.js';
import { dryRunTableText } from './dry-run-output.js';
import { NftablesFlushMonitor } from './flush-monitor.js';
import { serviceOfKey, ServicePortQuarantine } from './quarantine.js';
import { NftTransaction } from '../nft/nft-transaction.js';
import type { KernelTableState } from '../kernel/kernel-table-state.js';
import { localhostNodePortsFor, type LocalhostNodePorts, type LocalhostRun } from '../localhost/index.js';

/** Counters of one proxier beyond the engine's SyncStats: the source of the nftables-mode metrics. */
export interface NftablesProxierStats extends SyncStats {
  /** sync_proxy_rules_nftables_sync_failures_total: transactions nft refused (a quarantine retry counts each). */
  transactionFailures: number;
  /** sync_proxy_rules_nftables_cleanup_failures_total */
  cleanupFailures: number;
  /** sync_proxy_rules_nftables_failed_services_total: service ports nft refused, left out of a retry. */
  failedServicePorts: number;
  /** Times the table was found deleted and rebuilt. */
  tableRebuilds: number;
  /** Lines (operations) written by the last successful sync, over all its transactions. */
  lastOperations: number;
  /** Transactions the last successful sync used. */
  lastTransactions: number;
}

export interface NftablesProxierOptions {
  readonly family: IPFamily;
  readonly context: ProxyContext;
  readonly nft: NftInterface;
  readonly executor: CommandExecutor;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly networkInterfaces?: NetworkInterfaces;
  /** --dry-run: the in-memory table behind `nft`, printed to context.dryRunSink after each sync. */
  readonly dryRunTable?: MemoryNftTable;
  readonly tagDryRunOutput?: boolean;
  readonly observers?: ProxierObservers;
  /** Tests: the mark as upstream's tests spell it (0x4000); default from nftables.masqueradeBit. */
  readonly masqueradeMark?: string;
  /** Localhost NodePorts (KEP-6032, used when its gate is on): what the run shares. */
  readonly localhost?: LocalhostRun;
}

/** upstream's `%#08x` of 1 << bit: `0x` and eight hex digits. */
export function masqueradeMarkOf(bit: number): string {
  return '0x' + (2 ** bit).toString(16).padStart(8, '0');
}

/**
 * The nftables proxier of one IP family: upstream's pkg/proxy/nftables Proxier around the renderer
 * and TableSync. Every sync is one `nft -f -` transaction holding only what changed (plus, a second
 * later, one deleting the chains that went stale); a cold start into an empty table is written in
 * batches of whole services (see cold-start.ts); a failed transaction changes nothing, is counted and
 * retried as a full sync; a deleted table is noticed within one syncPeriod and rebuilt.
 */
export class NftablesProxier extends SyncingProxier {
  readonly stats: NftablesProxierStats = {
    ...newSyncStats(),
    transactionFailures: 0,
    cleanupFailures: 0,
    failedServicePorts: 0,
    tableRebuilds: 0,
    lastOperations: 0,
    lastTransactions: 0,
  };

  private readonly context: ProxyContext;
  private readonly nft: NftInterface;
  private readonly nftFamily: NftFamily;
  private readonly networkInterfaces: NetworkInterfaces;
  /** The machine's interfaces, or in --dry-run this node's Node object addresses (core's NodePortInterfaces). */
  private readonly nodePortInterfaces: NodePortInterfaces;
  private readonly dryRunTable: MemoryNftTable | undefined;
  private readonly names = new NameCache();
  private readonly table: TableSync;
  private readonly masqueradeMark: string;
  private readonly nodePortAddresses: NodePortAddresses;
  private readonly topologyGates: TopologyGates;
  private localDetector: LocalTrafficDetector;
  /** Rendered objects of every service port, as of the last sync (renders of unchanged ones are reused). */
  private readonly renders = new Map<string, ServicePortRender>();
  /** Localhost NodePorts; undefined while the KubeProxyNFTablesLocalhostNodePorts gate is off. */
  readonly localhost: LocalhostNodePorts | undefined;

  /** Failed syncs in a row: after two, the committed state is not trusted and the table is rebuilt. */
  private failuresInARow = 0;
  private firstSyncDone = false;
  /** A batch failed after its effect was recorded: read the kernel's table before the next sync. */
  private rereadKernel = false;
  /** Service ports nft refused: left out until they change or the next full sync (quarantine.ts). */
  private readonly quarantine = new ServicePortQuarantine();

  constructor(options: NftablesProxierOptions) {
    const { family, context } = options;
    const config = context.config;
    const logger = options.logger.child({ ipFamily: family });
    super({
      mode: 'nftables',
      family,
      nodeName: context.nodeName,
      logger,
      observers: options.observers,
      clock: options.clock,
      syncPeriodMs: parseDuration(config.nftables.syncPeriod),
      minSyncPeriodMs: parseDuration(config.nftables.minSyncPeriod),
      conntrack: context.dryRun ? undefined : new ConntrackCleaner({ family, executor: options.executor, logger }),
      dryRunSink: context.dryRun && options.dryRunTable ? context.dryRunSink : undefined,
      tagDryRunOutput: options.tagDryRunOutput ?? false,
    });
    this.context = context;
    this.nft = options.nft;
    this.nftFamily = familyOf(family);
    this.networkInterfaces = options.networkInterfaces ?? osNetworkInterfaces;
    this.nodePortInterfaces = new NodePortInterfaces(context, this.networkInterfaces);
    this.dryRunTable = options.dryRunTable;
    this.table = new TableSync(this.nftFamily);
    this.masqueradeMark = options.masqueradeMark ?? masqueradeMarkOf(config.nftables.masqueradeBit);
    // Upstream defaults nodePortAddresses to the node's primary IPs in this mode, and never serves
    // node ports on localhost.
    const npa = config.nodePortAddresses && config.nodePortAddresses.length > 0 ? config.nodePortAddresses : [NODE_PORT_ADDRESSES_PRIMARY];
    this.nodePortAddresses = parseNodePortAddresses(npa, family, context.nodeIPs[family], logger);
    this.localhost = localhostNodePortsFor(family, context, this.nodePortAddresses, options.localhost, { clock: options.clock, logger });
    this.localDetector = selectLocalDetector(config, family, undefined, logger);
    this.topologyGates = topologyGates(config.featureGates);
    logger.verbose('Using nftables mark for masquerade', { mark: this.masqueradeMark });
    logger.verbose('NFTables sync params', {
      minSyncPeriodMs: parseDuration(config.nftables.minSyncPeriod),
      syncPeriodMs: this.syncPeriodMs,
      burstSyncs: BURST_SYNCS,
      nft: this.nft.description,
    });
    this.watchForFlushes(
      new NftablesFlushMonitor({
        nft: this.nft,
        clock: this.clock,
        logger,
        intervalMs: this.syncPeriodMs,
        built: () => this.table.tableBuilt,
        onDeleted: () => this.tableDeleted(),
      }),
    );
  }

  get currentLocalDetector(): LocalTrafficDetector {
    return this.localDetector;
  }

  /** The committed state, for tests and the bench. */
  get tableState(): TableSync {
    return this.table;
  }

  /** The table was deleted behind our back: nothing of it is left, so everything is written again. */
  private tableDeleted(): void {
    this.logger.info('The kube-proxy nftables table was deleted; rebuilding it', { table: `${this.nftFamily} kube-proxy` });
    this.stats.tableRebuilds++;
    this.table.forget();
    this.renders.clear();
    this.requestFullSync();
    this.sync();
  }

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

  /** Stopping closes the localhost NodePort listeners (established connections end on their own). */
  protected override onStop(): void {
    super.onStop();
    this.localhost?.close();
  }

  /** A ServiceCIDR change rewrites cluster-ips-check (the skeleton is compared on every sync). */
  protected override serviceCIDRsChanged(): void {
    if (this.state.isInitialized()) this.sync();
  }

  private skeleton(): TableSkeleton {
    const selection = resolveNodePortAddresses(this.nodePortAddresses, this.nodePortInterfaces.interfaces());
    const ips: string[] = [];
    if (!selection.all) {
      for (const ip of selection.ips) {
        if (isLoopbackIP(ip)) {
          // Served by the localhost listeners when their gate is on; never DNATed in the kernel.
          if (!this.localhost?.proxyActive) this.logger.error('--nodeport-addresses includes localhost but localhost NodePorts are not supported', { address: ip });
          continue;
        }
        ips.push(ip);
      }
    }
    const skeleton = tableSkeleton({
      family: this.nftFamily,
      masqueradeMark: this.masqueradeMark,
      serviceCIDRs: this.serviceCIDRs,
      nodePortsOnAllAddresses: selection.all,
      nodePortIPs: ips,
      masqueradeAll: this.context.config.nftables.masqueradeAll,
      notLocal: nftLocalMatch(this.localDetector, this.family)?.notLocal ?? null,
    });
    return this.localhost ? this.localhost.skeleton(skeleton, this.nftFamily) : skeleton;
  }

  /**
   * After two failed syncs in a row the committed state is not trusted (the table is rebuilt). Chains
   * flushed by a sync are deleted by a later one, once the kernel surely let go of them.
   */
  protected override afterSync(succeeded: boolean): void {
    this.failuresInARow = succeeded ? 0 : this.failuresInARow + 1;
    if (this.table.staleChains.size > 0 && !this.stopped) this.runner.retryAfter(STALE_CHAIN_DELAY_MS + 100);
  }

  /**
   * Resolves when no flushed chain waits for deletion (the sync afterSync scheduled has run), or after
   * a bound of a few deletion delays, or when stopped: for --once, which exits right after.
   */
  async settled(): Promise<void> {
    const deadline = Date.now() + 5 * (STALE_CHAIN_DELAY_MS + 100);
    while (this.table.staleChains.size > 0 && !this.stopped && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Upstream's separate stale-chain transaction: its failure is counted, never fails the sync. */
  private async deleteStaleChains(now: number): Promise<void> {
    const step = this.table.staleChainCleanup(now);
    if (!step) return;
    this.logger.info('Deleting stale nftables chains', { numChains: step.tx.size });
    try {
      await this.nft.run(step.tx);
      step.commit();
    } catch (err) {
      this.stats.cleanupFailures++;
      this.observers.metrics?.nftablesCleanupFailed(this.family);
      this.logger.error('Unable to delete stale chains; will retry later', { error: String(err) });
    }
  }

  private planContext(): ServicePlanContext {
    return {
      nodeName: this.context.nodeName,
      nodeLabels: this.state.nodeLabels,
      topologyGates: this.topologyGates,
      masqueradeAll: this.context.config.nftables.masqueradeAll,
      localDetection: this.localDetector.kind !== 'none',
      nodeIP: this.context.nodeIPs[this.family] ?? null,
    };
  }

  /** The service-port keys a partial sync must look at: every port of every changed Service. */
  private changedKeys(applied: AppliedChanges): Set<string> {
    const names = new Set<string>(applied.services.updatedServices);
    for (const n of applied.endpoints.updatedServices) names.add(n);
    const keys = new Set<string>();
    if (names.size === 0) return keys;
    const nnOf = (key: string) => {
      const colon = key.indexOf(':');
      return colon < 0 ? key : key.slice(0, colon);
    };
    for (const key of this.state.serviceMap.keys()) if (names.has(nnOf(key))) keys.add(key);
    for (const key of this.renders.keys()) if (names.has(nnOf(key))) keys.add(key);
    for (const key of this.table.committedServices()) if (names.has(nnOf(key))) keys.add(key);
    return keys;
  }

  /** A full sync tries every quarantined service port again; a partial one those whose Service changed. */
  private releaseQuarantine(full: boolean, applied: AppliedChanges): void {
    if (this.quarantine.size === 0) return;
    const released = full ? this.quarantine.releaseAll() : this.quarantine.release(this.changedKeys(applied));
    if (released.length > 0) this.logger.info('Trying again service ports nft refused before', { servicePorts: released });
  }

  /**
   * The datapath step: stale chains deleted in their own transaction, the changed service ports
   * rendered (every one on a full sync), and the transactions that bring the kernel there. A line
   * nft refuses that belongs to one service port quarantines that port ('retry').
   */
  protected async syncOnce(request: SyncRequest): Promise<SyncResult> {
    const { full, applied, start } = request;
    if (request.attempt === 0) {
      await this.deleteStaleChains(start);
      this.releaseQuarantine(full, applied);
    }
    // A restart's listing of the table it takes over (nft and the kernel) runs while we render.
    const reading = this.mustReadKernel() ? this.readStateSafely() : null;
    const changes = this.renderChanges(full, applied);
    const steps = await this.transactions(changes, start, reading);
    let operations = 0;
    let transactions = 0;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i];
      try {
        const running = this.nft.run(step.tx);
        // A batch already recorded as committed lets the next be planned while nft and the kernel
        // apply this one (they run in another process, on the other core).
        if (isPrecommitted(step) && i + 1 < steps.length) void steps[i + 1].tx;
        await running;
      } catch (err) {
        return { outcome: this.transactionFailed(step, err) };
      }
      step.commit();
      operations += step.tx.size;
      if (step.tx.size > 0) transactions++;
    }
    this.stats.lastOperations = operations;
    this.stats.lastTransactions = transactions;
    this.logger.verbose('Reloading service nftables data', { numServices: this.state.serviceMap.size, numOperations: operations, numTransactions: transactions });
    this.firstSyncDone = true;
    await this.localhost?.apply();
    return {
      outcome: 'synced',
      noLocalEndpoints: this.noLocalEndpoints(),
      ...(this.dryRunTable ? { dryRunOutput: dryRunTableText(this.dryRunTable) } : {}),
    };
  }

  /** Renders the service ports this sync looks at (what the kernel holds counts too: a service deleted in a failed sync is still there). */
  private renderChanges(full: boolean, applied: AppliedChanges): Array<{ key: string; render: ServicePortRender | undefined }> {
    const serviceMap = this.state.serviceMap;
    const endpointsMap = this.state.endpointsMap;
    const planCtx = this.planContext();
    const renderCtx = {
      family: this.nftFamily,
      masqueradeMark: this.masqueradeMark,
      masqueradeAll: this.context.config.nftables.masqueradeAll,
      local: nftLocalMatch(this.localDetector, this.family),
      nodeIP: this.context.nodeIPs[this.family] ?? null,
      names: this.names,
    };
    const keys = full ? new Set<string>([...serviceMap.keys(), ...this.renders.keys(), ...this.table.committedServices()]) : this.changedKeys(applied);
    if (full) this.names.beginGeneration();
    const changes: Array<{ key: string; render: ServicePortRender | undefined }> = [];
    for (const key of keys) {
      const svc = serviceMap.get(key);
      let render: ServicePortRender | undefined;
      if (svc && !this.quarantine.has(key)) {
        const endpoints = endpointsMap.get(key) ?? [];
        try {
          assertRenderable(svc, endpoints);
          const plan = planServicePort(svc, endpoints, planCtx);
          render = renderServicePort(plan, renderCtx);
          if (this.localhost) render = this.localhost.render(key, plan, render);
        } catch (err) {
          // Never reached through validated sources; one bad service must not stop the others.
          this.logger.error('Skipping a service port whose text is unsafe for nft', { servicePort: key, error: String(err) });
        }
      }
      if (render) this.renders.set(key, render);
      else this.renders.delete(key);
      if (!render) this.localhost?.forget(key);
      changes.push({ key, render });
    }
    if (full) this.names.endGeneration();
    return changes;
  }

  private noLocalEndpoints(): { internal: number; external: number } {
    let internal = 0;
    let external = 0;
    for (const r of this.renders.values()) {
      if (r.noLocalInternal) internal++;
      if (r.noLocalExternal) external++;
    }
    return { internal, external };
  }

  /**
   * A transaction nft refused (nothing of it took effect). When the line nft names was written for
   * one service port, that port is quarantined and 'retry' asks for the others to be written at once
   * without it; otherwise the sync fails and is retried later as before.
   */
  private transactionFailed(step: SyncStep, err: unknown): 'failed' | 'retry' {
    // Batches recorded ahead of the kernel: what it holds now is read again before the next sync.
    if (isPrecommitted(step)) {
      this.table.forget();
      this.rereadKernel = true;
    }
    this.stats.transactionFailures++;
    this.observers.metrics?.nftablesSyncFailed(this.family);
    const line = err instanceof NftRunError ? err.line : undefined;
    const rules = line === undefined ? [] : step.tx.lines.slice(Math.max(0, line - 3), line + 2).map((l, i) => `${Math.max(1, line - 2) + i}: ${l}`);
    const owner = line === undefined ? undefined : step.tx.ownerOfLine(line);
    if (owner === undefined || this.quarantine.has(owner)) {
      this.logger.error('nftables sync failed', { error: String(err), ...(line === undefined ? {} : { line, rules }) });
      return 'failed';
    }
    this.quarantine.add(owner, String(err));
    this.stats.failedServicePorts++;
    this.observers.metrics?.nftablesServiceFailed?.(this.family);
    this.logger.error('nftables refused the rules of a service port; programming the others without it', {
      service: serviceOfKey(owner),
      servicePort: owner,
      error: String(err),
      line,
      rules,
    });
    return 'retry';
  }

  /**
   * The transactions of this sync:
   * - into an empty kernel (no table yet): cold-start batches of whole services;
   * - over a table a previous process left (a restart): that table is adopted (TableSync.adopt:
   *   its elements are read and trusted, its chains rewritten) and rewritten in the same batches,
   *   every service not yet rewritten still served by the old rules; then what nobody claimed is
   *   removed. A table we cannot adopt (another layout), or repeated failures: one transaction that
   *   deletes and rebuilds it atomically;
   * - otherwise: one transaction with the difference.
   */
  /** Whether this sync starts by reading the table from the kernel (a restart, or after a failed batch). */
  private mustReadKernel(): boolean {
    return this.failuresInARow < 2 && !this.table.tableBuilt && (!this.firstSyncDone || this.rereadKernel);
  }

  private async transactions(
    changes: ReadonlyArray<{ key: string; render: ServicePortRender | undefined }>,
    now: number,
    reading: Promise<KernelTableState | null | 'unreadable'> | null,
  ): Promise<SyncStep[]> {
    const skeleton = this.skeleton();
    if (this.failuresInARow >= 2) {
      this.logger.info('Rebuilding the kube-proxy nftables table in one transaction after repeated failures', { services: changes.length });
      return [this.table.step(skeleton, changes, now, { rebuild: true })];
    }
    let steps: SyncStep[];
    if (this.table.tableBuilt) {
      steps = [this.table.step(skeleton, changes, now)];
    } else {
      const left = reading === null ? null : await reading;
      this.rereadKernel = false;
      if (left === 'unreadable' || (left !== null && !this.table.adopt(left, skeleton))) {
        this.logger.info('Rebuilding the kube-proxy nftables table in one transaction (it cannot be taken over)', { services: changes.length });
        return [this.table.step(skeleton, changes, now, { rebuild: true })];
      }
      if (left !== null) this.logger.info('Taking over the kube-proxy nftables table a previous process left', { chains: left.chains.length });
      else this.table.forget();
      steps = coldStartBatches(this.table, skeleton, changes, now, { elementsLast: left === null });
    }
    // After a takeover (also when it was interrupted by a failure): remove what nobody claimed.
    steps.push(lazyStep(() => this.table.finishAdoption(now) ?? { tx: new NftTransaction(this.nftFamily), commit: () => undefined }));
    return steps;
  }

  private async readStateSafely(): Promise<KernelTableState | null | 'unreadable'> {
    try {
      return await this.nft.readState();
    } catch (err) {
      this.logger.error('Failed to read the existing kube-proxy table', { error: String(err) });
      return 'unreadable';
    }
  }
}

function isPrecommitted(step: SyncStep): step is PlannedStep {
  return (step as Partial<PlannedStep>).precommitted === true;
}
