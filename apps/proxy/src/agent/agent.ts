import type { DependencyContainer } from 'tsyringe';
import {
  METRICS_REGISTRY,
  PROXIER_HEALTH_UPDATER,
  PROXY_METRICS,
  ProxierHealthTracker,
  PromProxyMetrics,
  SERVICE_HEALTH_SERVER,
  parseDuration,
  type Clock,
  type IPFamily,
  type KubeProxyConfiguration,
  type Logger,
  type NodeHandler,
  type ServiceHealthServer,
  type Sysctl,
} from '@kube-proxy/core';
import { parseBindAddress } from './bind-address.js';
import { checkBridgeNetfilter, setupConntrack } from './conntrack-setup.js';
import { healthzHandler } from './healthz-handler.js';
import { ManagedHttpServer } from './managed-http-server.js';
import { metricsHandler, type DebugRoute } from './metrics-handler.js';
import { NodeEligibilityHandler } from './node-eligibility-handler.js';
import type { NodeEventRecorder } from './node-events.js';
import { noopServiceHealthServer } from './noop-service-health-server.js';
import { applyOomScoreAdj, type FileWriter } from './oom-score.js';
import type { ServePolicy } from './serve-policy.js';
import { ServiceHealthListeners } from './service-health-listeners.js';
import type { SourceHealth } from './source-health.js';
import { NodeReadinessReporter, type NodeReadinessReporterOptions } from '../node/node-readiness-reporter.js';
import type { NodeStatusClient } from '../node/node-status-client.js';

export interface ProxyAgentOptions {
  readonly config: KubeProxyConfiguration;
  /** The selected proxy mode (decides the sync period; its backend defines the mode's metrics when it registers). */
  readonly mode: string;
  readonly nodeName: string;
  readonly dryRun: boolean;
  readonly serve: ServePolicy;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly sysctl: Sysctl;
  /** The configuration source's health, if it has any (the API source); failing it fails /healthz. */
  readonly sourceHealth?: SourceHealth;
  /** Where failed host setup (conntrack sysctls, oom_score_adj) is reported as Node events; none by default. */
  readonly events?: NodeEventRecorder;
  /**
   * Where the KubeProxyReady Node condition is written (the API source's client) and the families
   * whose first sync it waits for; none for --manifests and --dry-run, which write nothing to a cluster.
   */
  readonly readiness?: {
    readonly client: NodeStatusClient;
    readonly families: readonly IPFamily[];
    /** Test seams. */
    readonly tuning?: Pick<NodeReadinessReporterOptions, 'checkIntervalMs' | 'heartbeatIntervalMs' | 'retry'>;
  };
  /** /debug/trace and /debug/explain on the metrics server (the app's; none by default). */
  readonly debug?: DebugRoute;
  /** Test seams. */
  readonly numCPU?: number;
  readonly writeFile?: FileWriter;
  readonly defaultMetrics?: boolean;
}

/**
 * Upstream's healthz timeout: 2 × the proxier's syncPeriod (ipvs and nftables have their own;
 * iptables' also drives third-party modes).
 */
export function healthTimeoutMs(config: KubeProxyConfiguration, mode: string): number {
  const period = mode === 'ipvs' ? config.ipvs.syncPeriod : mode === 'nftables' ? config.nftables.syncPeriod : config.iptables.syncPeriod;
  return 2 * parseDuration(period);
}

/**
 * Everything kube-proxy runs besides the proxier (upstream's ProxyServer parts): proxier health
 * with /healthz + /livez, the metrics server, the Services' health-check node ports, and the
 * host tuning done once at startup (oom_score_adj, conntrack sysctls). Backends find the health
 * updater, metrics and service health server in the container under core's tokens.
 */
export class ProxyAgent {
  readonly health: ProxierHealthTracker;
  readonly metrics: PromProxyMetrics;
  readonly serviceHealth: ServiceHealthServer;
  readonly nodeHandler: NodeHandler;
  private readonly listeners: ServiceHealthListeners | undefined;
  private readonly healthzServer: ManagedHttpServer | undefined;
  private readonly metricsServer: ManagedHttpServer | undefined;
  private readonly readiness: NodeReadinessReporter | undefined;

  constructor(private readonly opts: ProxyAgentOptions) {
    const { config, mode, logger, clock, serve } = opts;
    this.health = new ProxierHealthTracker(clock, healthTimeoutMs(config, mode));
    this.readiness = this.readinessReporter();
    this.metrics = new PromProxyMetrics({ clock, defaultMetrics: opts.defaultMetrics ?? true });
    this.nodeHandler = new NodeEligibilityHandler(opts.nodeName, this.health);
    this.listeners = serve.serviceHealthChecks
      ? new ServiceHealthListeners({ checker: this.health, logger: logger.child({ component: 'service-healthcheck' }), nodeName: opts.nodeName })
      : undefined;
    this.serviceHealth = this.listeners ?? noopServiceHealthServer;

    const hardFail = config.bindAddressHardFail;
    // An empty bind address disables the server, as upstream.
    if (serve.healthz && config.healthzBindAddress !== '') {
      this.healthzServer = new ManagedHttpServer({
        name: 'healthz',
        address: parseBindAddress(config.healthzBindAddress),
        handler: healthzHandler(this.health, this.metrics, opts.sourceHealth),
        logger,
        clock,
        hardFail,
      });
    }
    if (serve.metrics && config.metricsBindAddress !== '') {
      this.metricsServer = new ManagedHttpServer({
        name: 'metrics',
        address: parseBindAddress(config.metricsBindAddress),
        handler: metricsHandler({ metrics: this.metrics, mode, config, logger, ...(opts.debug ? { debug: opts.debug } : {}) }),
        logger,
        clock,
        hardFail,
      });
    }
  }

  /** The KubeProxyReady reporter over the same health state /healthz answers from; none without a client or in --dry-run. */
  private readinessReporter(): NodeReadinessReporter | undefined {
    const { readiness, dryRun, nodeName, mode, clock, logger } = this.opts;
    if (!readiness || dryRun) return undefined;
    return new NodeReadinessReporter({
      nodeName,
      mode,
      families: readiness.families,
      checker: this.health,
      healthTimeoutMs: this.health.healthTimeoutMs,
      client: readiness.client,
      clock,
      logger: logger.child({ component: 'node-readiness' }),
      ...readiness.tuning,
    });
  }

  /** Makes the agent's parts resolvable by backends (all optional for them). */
  register(container: DependencyContainer): void {
    container.register(PROXIER_HEALTH_UPDATER, { useValue: this.health });
    container.register(PROXY_METRICS, { useValue: this.metrics });
    // The same registry, for the metrics a backend defines itself (core's MetricsRegistry API).
    container.register(METRICS_REGISTRY, { useValue: this.metrics });
    container.register(SERVICE_HEALTH_SERVER, { useValue: this.serviceHealth });
  }

  /** One-time host tuning; nothing in --dry-run, which must leave the host alone. */
  async prepareHost(): Promise<void> {
    const { config, logger, sysctl, events } = this.opts;
    if (this.opts.dryRun) {
      logger.info('Dry run: not applying oom_score_adj or conntrack sysctls');
      return;
    }
    await applyOomScoreAdj(config.oomScoreAdj, logger, this.opts.writeFile, events);
    await setupConntrack({ config: config.conntrack, sysctl, logger, numCPU: this.opts.numCPU, events });
    await checkBridgeNetfilter(sysctl, logger);
  }

  /**
   * Opens the healthz and metrics servers; rejects (ServerBindError) only with bindAddressHardFail.
   * With `firstSync` (the provider's: every family), the KubeProxyReady condition follows it.
   */
  async start(firstSync?: Promise<void>): Promise<void> {
    try {
      await this.healthzServer?.start();
      await this.metricsServer?.start();
    } catch (err) {
      await this.stop();
      throw err;
    }
    if (!firstSync) return;
    // A provider stopped before its first sync rejects it: that only means there is nothing to report.
    firstSync.catch(() => undefined);
    this.readiness?.start(firstSync);
  }

  async stop(): Promise<void> {
    await Promise.all([this.healthzServer?.stop(), this.metricsServer?.stop(), this.listeners?.close(), this.readiness?.stop()]);
  }

  /** Bound ports (tests bind port 0). */
  healthzPort(): number | undefined {
    return this.healthzServer?.port();
  }

  metricsPort(): number | undefined {
    return this.metricsServer?.port();
  }
}
