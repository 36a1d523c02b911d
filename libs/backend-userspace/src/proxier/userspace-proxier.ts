import type { AppliedChanges, Clock, IPFamily, Logger, NetworkInterfaces, NodePortAddresses, ProxierObservers, ProxyContext, ProxyMetrics, SyncRequest, SyncResult, SyncStats, V1Node } from '@kube-proxy/core';
import { networkInterfaces as osNetworkInterfaces } from 'node:os';
import type { IptablesInterface } from '@kube-proxy/netfilter-iptables';
import { extractLines, IptablesRestoreError } from '@kube-proxy/netfilter-iptables';
import { newSyncStats, NodePortInterfaces, parseDuration, parseNodePortAddresses, parsePortRange, resolveNodePortAddresses, SyncingProxier, topologyGates } from '@kube-proxy/core';
import { IptablesFlushMonitor } from '@kube-proxy/netfilter-iptables';
import { USERSPACE_JUMPS } from '../cleanup.js';
import { type ProxyCounters, ProxyPortAllocator, type OpenProxySocket } from '@kube-proxy/userspace-proxy';
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
  /** The host's interfaces, for --nodeport-addresses (os.networkInterfaces unless a test injects them). */
  readonly networkInterfaces?: NetworkInterfaces;
}

/** Counters of one proxier beyond the engine's SyncStats. */
export interface UserspaceSyncStats extends SyncStats {
  restoreFailures: number;
  natRules: number;
  filterRules: number;
  /** Flushes of the capture rules the flush monitor noticed (each forced a resync). */
  flushesDetected: number;
}

/**
 * Userspace mode for one IP family: a proxy socket per service port in this process, and capture
 * rules that send the service's addresses to it. Each sync opens sockets for new service ports,
 * hands every socket its current endpoints, rewrites the capture chains in one iptables-restore,
 * then closes the sockets of service ports that went away.
 */
export class UserspaceProxier extends SyncingProxier {
  readonly stats: UserspaceSyncStats = {
    ...newSyncStats(),
    restoreFailures: 0,
    natRules: 0,
    filterRules: 0,
    flushesDetected: 0,
  };
  readonly counters: ProxyCounters;
  readonly sockets: SocketTable;

  private readonly context: ProxyContext;
  private readonly iptables: IptablesInterface | null;
  /** Notices capture rules flushed behind our back (null when none are installed). */
  private readonly captureMonitor: IptablesFlushMonitor | null;
  private readonly listenIP: string;
  /** --nodeport-addresses of this family, keywords expanded by core; resolved against interfaces each sync. */
  private readonly nodePortAddresses: NodePortAddresses;
  private readonly nodePortInterfaces: NodePortInterfaces;
  private readonly warnedSkips = new Set<string>();
  private hostRulesWarned = false;
  /** Service ports whose socket failed to open: a partial sync tries them again. */
  private failedKeys: ReadonlySet<string> = new Set();

  constructor(options: UserspaceProxierOptions) {
    const { family, context } = options;
    const config = context.config;
    const logger = options.logger.child({ ipFamily: family });
    super({
      mode: 'userspace',
      family,
      nodeName: context.nodeName,
      logger,
      observers: options.observers,
      clock: options.clock,
      syncPeriodMs: parseDuration(config.iptables.syncPeriod),
      minSyncPeriodMs: parseDuration(config.iptables.minSyncPeriod),
      // A full sync reconciles every socket and rewrites the capture chains; a partial one only the
      // sockets of the Services that changed, and the capture chains only when their addresses, ports
      // or sockets did (an endpoint change rewrites nothing in the kernel). Flushed capture rules are
      // noticed by the flush monitor every syncPeriod, which forces a full sync; otherwise a full
      // resync every hour, as iptables mode. A dry run prints the whole table each time: always full.
      alwaysFull: context.dryRun,
      dryRunSink: context.dryRun ? context.dryRunSink : undefined,
      tagDryRunOutput: options.tagDryRunOutput ?? false,
    });
    this.context = context;
    this.iptables = options.iptables;
    this.counters = options.counters;
    this.listenIP = listenAddress(config.bindAddress, family);
    // Upstream's userspace mode never read nodePortAddresses; ours narrows NodePorts like the kernel
    // modes do, with the same core parsing (CIDRs and the keywords primary, localhost, all). Loopback
    // needs nothing special here: the capture rules DNAT/REDIRECT to a socket of this process.
    this.nodePortAddresses = parseNodePortAddresses(config.nodePortAddresses, family, context.nodeIPs[family], logger);
    this.nodePortInterfaces = new NodePortInterfaces(context, options.networkInterfaces ?? osNetworkInterfaces);
    const allocator = new ProxyPortAllocator(parsePortRange(config.portRange));
    this.sockets = new SocketTable(allocator, options.openSocket, logger, context.dryRun);
    this.captureMonitor =
      this.iptables === null
        ? null
        : new IptablesFlushMonitor({
            iptables: this.iptables,
            clock: this.clock,
            logger,
            intervalMs: this.syncPeriodMs,
            tables: ['nat', 'filter'],
            subject: 'userspace capture rules',
            onFlush: () => this.forceSync(),
          });
    // It expects nothing until a sync installed the rules.
    if (this.captureMonitor) this.watchForFlushes(this.captureMonitor);
  }

  // ---- Provider -------------------------------------------------------------------------------

  /** Closes the proxy sockets (established TCP connections finish on their own). */
  protected override onStop(): void {
    super.onStop();
    this.sockets.closeAll();
  }

  /** Called by the flush monitor: capture rules were removed; a sync re-installs all of them. */
  forceSync(): void {
    if (this.stopped) return;
    this.stats.flushesDetected = this.captureMonitor?.flushesDetected ?? 0;
    this.requestFullSync();
    this.sync();
  }

  /** The data plane died with every socket: forget them and resync, which opens them again. */
  dataPlaneLost(): void {
    if (this.stopped) return;
    this.sockets.forgetAll();
    this.requestFullSync();
    this.sync();
  }

  /** A dry run resolves --nodeport-addresses among the Node object's addresses: render again when they change. */
  protected override nodeEvent(node: V1Node, deleted: boolean): void {
    if (!this.nodePortInterfaces.nodeEvent(node, deleted)) return;
    this.requestFullSync();
    if (this.state.isInitialized()) this.sync();
  }

  // ---- sync -----------------------------------------------------------------------------------

  /**
   * The datapath step: sockets first (a capture rule must never point at a port nobody listens on),
   * then the capture chains in one iptables-restore, then the sockets of removed service ports closed.
   */
  protected async syncOnce(request: SyncRequest): Promise<SyncResult> {
    const keys = request.full ? undefined : this.changedKeys(request.applied);
    const desired = desiredPorts(this.state.serviceMap, this.state.endpointsMap, this.context.nodeName, this.state.nodeLabels, (key, reason) => {
      if (this.warnedSkips.has(key)) return;
      this.warnedSkips.add(key);
      this.logger.warn('Skipping service port', { servicePort: key, reason });
    }, topologyGates(this.context.config.featureGates), keys);
    const { failed, toClose, capturesChanged } = keys === undefined ? await this.sockets.reconcile(desired) : await this.sockets.reconcileKeys(desired, keys);
    this.failedKeys = new Set(failed);
    if (this.stopped) {
      for (const { socket } of toClose) socket.close();
      return { outcome: 'failed' };
    }
    // Only endpoints moved: the sockets follow them already and the capture rules stay as they are.
    if (keys !== undefined && !capturesChanged) return this.syncedResult(failed);
    const selection = resolveNodePortAddresses(this.nodePortAddresses, this.nodePortInterfaces.interfaces());
    const rules = renderCaptureRules(this.sockets.entries().map(portalOf), {
      family: this.family,
      listenIP: this.listenIP,
      nodeIP: this.context.nodeIPs[this.family] ?? null,
      nodePortIPs: selection.all ? null : selection.ips,
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
    if (!rulesApplied) return { outcome: 'failed' };
    this.stats.natRules = rules.natRules;
    this.stats.filterRules = rules.filterRules;
    return this.syncedResult(failed, this.context.dryRun ? [this.portTable() + rules.payload] : undefined);
  }

  private syncedResult(failed: readonly string[], dryRunOutput?: string[]): SyncResult {
    return {
      outcome: 'synced',
      ...(this.iptables === null ? {} : { publish: (metrics) => this.publishRuleCounts(metrics) }),
      ...(dryRunOutput ? { dryRunOutput, dryRunLabel: 'userspace' } : {}),
      // Counted as synced (everything else is programmed), but try the failed sockets again soon.
      ...(failed.length > 0 ? { retryAfterMs: this.syncPeriodMs } : {}),
    };
  }

  /**
   * The service-port keys a partial sync looks at: every port of every Service whose ports or
   * endpoints changed (those it has and those it had a socket for), and the ports whose socket failed
   * to open. Finding a Service's ports scans the key sets once (string compares, well under a
   * millisecond at 10,000 service ports); everything after that is per changed port.
   */
  private changedKeys(applied: AppliedChanges): Set<string> {
    const keys = new Set<string>(this.failedKeys);
    const names = new Set<string>(applied.services.updatedServices);
    for (const n of applied.endpoints.updatedServices) names.add(n);
    if (names.size === 0) return keys;
    const nnOf = (key: string) => {
      const colon = key.indexOf(':');
      return colon < 0 ? key : key.slice(0, colon);
    };
    for (const key of this.state.serviceMap.keys()) if (names.has(nnOf(key))) keys.add(key);
    for (const key of this.sockets.keys()) if (names.has(nnOf(key))) keys.add(key);
    return keys;
  }

  /** Replaces the capture chains, then makes sure the built-in chains jump to them. */
  private async applyRules(rules: CaptureRuleset): Promise<boolean> {
    if (this.iptables === null) return true;
    // While the chains are rewritten, a rule the flush monitor expected may legitimately go away.
    this.captureMonitor?.clearExpectedRules();
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
    this.captureMonitor?.setExpectedRules(expectedCaptureRules(rules.payload));
    return true;
  }

  /** sync_proxy_rules_iptables_total / _last of the capture chains (every sync rewrites all of them). */
  private publishRuleCounts(metrics: ProxyMetrics): void {
    metrics.iptablesRules(this.family, 'nat', { total: this.stats.natRules, last: this.stats.natRules });
    metrics.iptablesRules(this.family, 'filter', { total: this.stats.filterRules, last: this.stats.filterRules });
  }

  private portTable(): string {
    return formatPortTable(this.sockets.entries(), {
      listenIP: this.listenIP,
      examplePorts: this.context.config.portRange.trim() === '' || parsePortRange(this.context.config.portRange) === null,
    });
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
