import type {
  AppliedChanges,
  Clock,
  IPFamily,
  IptablesInterface,
  Logger,
  ProxierObservers,
  ProxyContext,
} from '@kube-proxy/core';
import { BoundedFrequencyRunner, extractLines, IptablesRestoreError, parseDuration, parsePortRange, ProxierBase, topologyGates } from '@kube-proxy/core';
import { IptablesFlushMonitor } from '@kube-proxy/core';
import { USERSPACE_JUMPS } from '../cleanup.js';
import type { ProxyCounters } from '../proxy/counters.js';
import { ProxyPortAllocator } from '../proxy/port-allocator.js';
import type { OpenProxySocket } from '../proxy/socket-handle.js';
import { renderCaptureRules, type CapturePortal, type CaptureRuleset } from '../render/capture-rules.js';
import { captureJumpArgs, expectedCaptureRules } from './capture-expectations.js';
import { desiredPorts } from './desired-ports.js';
import { formatPortTable } from './port-table.js';
import { SocketTable, type ServicePortProxy } from './socket-table.js';

export interface UserspaceProxierOptions {
  readonly family: IPFamily;
  readonly context: ProxyContext;
  /** The host's iptables for capture rules; null when they are not installed (dry run, no root, no iptables). */
  readonly iptables: IptablesInterface | null;
  readonly openSocket: OpenProxySocket;
  readonly counters: ProxyCounters;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly observers?: ProxierObservers;
  /** Append the family to the dry-run header (two proxiers share one sink). */
  readonly tagDryRunOutput?: boolean;
}

/** Counters of one proxier's syncs. */
export interface UserspaceSyncStats {
  syncs: number;
  failedSyncs: number;
  restoreFailures: number;
  lastSyncDurationMs: number;
  natRules: number;
  filterRules: number;
  /** Flushes of the capture rules the flush monitor noticed (each forced a resync). */
  flushesDetected: number;
}

/** Upstream's burstSyncs. */
const BURST_SYNCS = 2;
const FULL_SYNC_PERIOD_MS = 60 * 60 * 1000;

/**
 * Userspace mode for one IP family: a proxy socket per service port in this process, and capture
 * rules that send the service's addresses to it. Each sync opens sockets for new service ports,
 * hands every socket its current endpoints, rewrites the capture chains in one iptables-restore,
 * then closes the sockets of service ports that went away.
 */
export class UserspaceProxier extends ProxierBase {
  readonly stats: UserspaceSyncStats = {
    syncs: 0,
    failedSyncs: 0,
    restoreFailures: 0,
    lastSyncDurationMs: 0,
    natRules: 0,
    filterRules: 0,
    flushesDetected: 0,
  };
  readonly counters: ProxyCounters;
  readonly sockets: SocketTable;

  private readonly context: ProxyContext;
  private readonly iptables: IptablesInterface | null;
  private readonly clock: Clock;
  private readonly logger: Logger;
  protected readonly runner: BoundedFrequencyRunner;
  /** Notices capture rules flushed behind our back (null when none are installed). */
  private readonly flushMonitor: IptablesFlushMonitor | null;
  private readonly syncPeriodMs: number;
  private readonly listenIP: string;
  private readonly tagDryRunOutput: boolean;
  private readonly warnedSkips = new Set<string>();
  private hostRulesWarned = false;

  constructor(options: UserspaceProxierOptions) {
    const { family, context } = options;
    const logger = options.logger.child({ ipFamily: family });
    super({ mode: 'userspace', family, nodeName: context.nodeName, logger, observers: options.observers });
    const config = context.config;
    this.context = context;
    this.iptables = options.iptables;
    this.clock = options.clock;
    this.logger = logger;
    this.counters = options.counters;
    this.tagDryRunOutput = options.tagDryRunOutput ?? false;
    this.listenIP = listenAddress(config.bindAddress, family);
    this.syncPeriodMs = parseDuration(config.iptables.syncPeriod);
    const allocator = new ProxyPortAllocator(parsePortRange(config.portRange));
    this.sockets = new SocketTable(allocator, options.openSocket, this.logger, context.dryRun);
    this.runner = new BoundedFrequencyRunner({
      name: `userspace-sync-runner-${family}`,
      fn: () => this.syncProxy(),
      minIntervalMs: parseDuration(config.iptables.minSyncPeriod),
      // Flushed capture rules are noticed by the flush monitor every syncPeriod, which forces a
      // resync; otherwise a full resync every hour, as iptables mode.
      maxIntervalMs: FULL_SYNC_PERIOD_MS,
      burstRuns: BURST_SYNCS,
      clock: this.clock,
      logger: this.logger,
    });
    this.flushMonitor =
      this.iptables === null
        ? null
        : new IptablesFlushMonitor({
            iptables: this.iptables,
            clock: this.clock,
            logger: this.logger,
            intervalMs: this.syncPeriodMs,
            tables: ['nat', 'filter'],
            subject: 'userspace capture rules',
            onFlush: () => this.forceSync(),
          });
  }

  // ---- Provider -------------------------------------------------------------------------------

  /** The flush monitor starts with the loop; it expects nothing until a sync installed the rules. */
  protected override async beforeLoop(): Promise<void> {
    await this.flushMonitor?.start();
  }

  /** Closes the proxy sockets (established TCP connections finish on their own). */
  protected onStop(): void {
    this.flushMonitor?.stop();
    this.sockets.closeAll();
  }

  /** Called by the flush monitor: capture rules were removed; a sync re-installs all of them. */
  forceSync(): void {
    if (this.stopped) return;
    this.stats.flushesDetected = this.flushMonitor?.flushesDetected ?? 0;
    this.sync();
  }

  /** The data plane died with every socket: forget them and resync, which opens them again. */
  dataPlaneLost(): void {
    if (this.stopped) return;
    this.sockets.forgetAll();
    this.sync();
  }

  // ---- sync -----------------------------------------------------------------------------------

  private async syncProxy(): Promise<void> {
    if (this.stopped) return;
    if (!this.state.isInitialized()) {
      this.logger.verbose('Not syncing the userspace proxy until Services and EndpointSlices have been received');
      return;
    }
    const start = this.clock.now();
    this.state.takeTopologyChanged();
    const applied = this.state.applyPendingChanges();
    let success = false;
    try {
      success = await this.syncOnce(applied);
    } catch (err) {
      this.logger.error('Unexpected error while syncing the userspace proxy', { error: String(err) });
    } finally {
      this.stats.lastSyncDurationMs = this.clock.now() - start;
      this.observers.metrics?.syncDuration(this.family, this.stats.lastSyncDurationMs / 1000, 'full');
      if (!success) {
        this.stats.failedSyncs++;
        this.logger.info('Sync failed', { retryingTimeMs: this.syncPeriodMs });
        if (!this.stopped) this.runner.retryAfter(this.syncPeriodMs);
      }
    }
  }

  private async syncOnce(applied: AppliedChanges): Promise<boolean> {
    const desired = desiredPorts(this.state.serviceMap, this.state.endpointsMap, this.context.nodeName, this.state.nodeLabels, (key, reason) => {
      if (this.warnedSkips.has(key)) return;
      this.warnedSkips.add(key);
      this.logger.warn('Skipping service port', { servicePort: key, reason });
    }, topologyGates(this.context.config.featureGates));
    // Sockets first: a capture rule must never point at a port nobody listens on.
    const { failed, toClose } = await this.sockets.reconcile(desired);
    if (this.stopped) {
      for (const { socket } of toClose) socket.close();
      return false;
    }
    const rules = renderCaptureRules(this.sockets.entries().map(portalOf), {
      family: this.family,
      listenIP: this.listenIP,
      nodeIP: this.context.nodeIPs[this.family] ?? null,
    });
    if (rules.hostRulesOmitted && !this.hostRulesWarned) {
      this.hostRulesWarned = true;
      this.logger.warn("The node's IP is unknown: traffic from this host to Services is not captured (only traffic routed through it)");
    }
    const rulesApplied = await this.applyRules(rules);
    // Removed service ports: their rules are gone (or, after a failed restore, point at a port
    // that will now refuse, which is what a removed Service should do).
    for (const { key, protocol, socket } of toClose) {
      this.logger.info(this.context.dryRun ? 'Would close proxy port (dry run)' : 'Closed proxy port', { servicePort: key, protocol, port: socket.port });
      socket.close();
    }
    if (!rulesApplied) return false;

    this.stats.syncs++;
    this.stats.natRules = rules.natRules;
    this.stats.filterRules = rules.filterRules;
    const now = this.clock.now();
    await this.report(applied, now);
    this.writeDryRunOutput(rules, now);
    if (!this.first.settled) this.first.resolve();
    if (failed.length > 0) {
      // Counted as synced (everything else is programmed), but try the failed sockets again soon.
      this.runner.retryAfter(this.syncPeriodMs);
    }
    return true;
  }

  /** Replaces the capture chains, then makes sure the built-in chains jump to them. */
  private async applyRules(rules: CaptureRuleset): Promise<boolean> {
    if (this.iptables === null) return true;
    // While the chains are rewritten, a rule the flush monitor expected may legitimately go away.
    this.flushMonitor?.clearExpectedRules();
    try {
      // The restore declares (so creates or flushes) every capture chain; --noflush leaves the rest
      // of each table alone.
      await this.iptables.restore(rules.payload, { noFlush: true, counters: false });
    } catch (err) {
      this.stats.restoreFailures++;
      this.observers.metrics?.iptablesRestoreFailed(this.family, false);
      if (err instanceof IptablesRestoreError && err.line !== undefined) {
        const lines = extractLines(rules.payload, err.line, 3);
        this.logger.error('Failed to install capture rules', { error: err.message, line: err.line, rules: lines.map((l) => `${l.line}: ${l.text}`) });
      } else {
        this.logger.error('Failed to install capture rules', { error: String(err) });
      }
      return false;
    }
    for (const jump of USERSPACE_JUMPS) {
      // Portal jumps go first in PREROUTING/OUTPUT (before anything matching node ports), node-port
      // jumps last, as upstream ordered them.
      const position = jump.to.startsWith('KUBE-NODEPORT-') && jump.table === 'nat' ? '-A' : '-I';
      const args = captureJumpArgs(jump);
      try {
        await this.iptables.ensureRule(position, jump.table, jump.from, args);
      } catch (err) {
        this.logger.error('Failed to ensure the jump to a capture chain', { table: jump.table, chain: jump.from, target: jump.to, error: String(err) });
        return false;
      }
    }
    this.flushMonitor?.setExpectedRules(expectedCaptureRules(rules.payload));
    return true;
  }

  private async report(applied: AppliedChanges, now: number): Promise<void> {
    const { metrics, health, serviceHealth } = this.observers;
    if (metrics) {
      for (const times of applied.endpoints.lastChangeTriggerTimes.values()) {
        for (const t of times) metrics.networkProgrammingLatency(this.family, (now - t) / 1000);
      }
      if (this.iptables !== null) {
        metrics.iptablesRules(this.family, 'nat', { total: this.stats.natRules, last: this.stats.natRules });
        metrics.iptablesRules(this.family, 'filter', { total: this.stats.filterRules, last: this.stats.filterRules });
      }
    }
    health?.updated(this.family);
    metrics?.syncSucceeded(this.family);
    if (serviceHealth) {
      try {
        await serviceHealth.syncServices(this.state.healthCheckNodePorts(), this.family);
        await serviceHealth.syncEndpoints(this.state.localReadyEndpoints(), this.family);
      } catch (err) {
        this.logger.error('Error syncing healthcheck services', { error: String(err) });
      }
    }
  }

  private writeDryRunOutput(rules: CaptureRuleset, now: number): void {
    if (!this.context.dryRun) return;
    const tag = this.tagDryRunOutput ? ` ${this.family}` : '';
    const header = `# sync ${this.stats.syncs} userspace ${new Date(now).toISOString()}${tag}\n`;
    const table = formatPortTable(this.sockets.entries(), {
      listenIP: this.listenIP,
      examplePorts: this.context.config.portRange.trim() === '' || parsePortRange(this.context.config.portRange) === null,
    });
    this.context.dryRunSink.write(header + table + rules.payload);
  }
}

function portalOf(proxy: ServicePortProxy): CapturePortal {
  const svc = proxy.service;
  const internalPort = proxy.internal.port;
  return {
    name: proxy.key,
    protocol: proxy.protocol,
    clusterIP: svc.clusterIP,
    port: svc.port,
    externalIPs: svc.externalIPs,
    loadBalancerIPs: svc.loadBalancerVIPs,
    nodePort: svc.nodePort,
    internalProxyPort: internalPort,
    externalProxyPort: proxy.external?.port ?? internalPort,
  };
}

/**
 * Where this family's proxy sockets listen: --bind-address when it is of this family, else the
 * family's any-address (upstream's listenIP).
 */
export function listenAddress(bindAddress: string, family: IPFamily): string {
  const v6 = bindAddress.includes(':');
  if (bindAddress !== '' && v6 === (family === 'IPv6')) return bindAddress;
  return family === 'IPv6' ? '::' : '0.0.0.0';
}
