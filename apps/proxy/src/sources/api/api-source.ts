import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { Logger } from '@kube-proxy/core';
import type { ManifestHandlers } from '../manifests/manifest-source.js';
import { proxyLabelSelector } from '../object-filter.js';
import { DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
import { postBirthCry } from './birth-cry.js';
import { HandlerAdapter } from './handler-adapter.js';
import type { KubeClient } from './kube-client.js';
import { waitForNode } from './node-wait.js';
import { ResourceInformer, type InformerHealth } from './resource-informer.js';
import { endpointSliceHandler, nodeHandler, serviceHandler } from './resource-handlers.js';
import { ServiceCIDRInformer } from './service-cidr-informer.js';
import { NodeWaitError } from './api-source-errors.js';

export interface ApiSourceOptions {
  readonly client: KubeClient;
  readonly nodeName: string;
  /** --service-proxy-name; "" for upstream's default selector. */
  readonly serviceProxyName: string;
  readonly logger: Logger;
  /** configSyncPeriod: every object is re-delivered as an unchanged update this often. */
  readonly configSyncPeriodMs: number;
  /** detectLocalMode NodeCIDR: loadInitial() waits for the Node's pod CIDRs and fails without them. */
  readonly waitForPodCIDR: boolean;
  /** How long loadInitial() waits for the Node. Default 5 min with waitForPodCIDR (upstream), else 30 s. */
  readonly nodeWaitTimeoutMs?: number;
  readonly nodePollIntervalMs?: number;
  /** Post the "Starting" event at start(). Default true; the CLI turns it off for --dry-run. */
  readonly postStartingEvent?: boolean;
  readonly backoff?: BackoffOptions;
  /** How long an informer may be disconnected before isHealthy() says no. Default 60 s. */
  readonly unhealthyAfterMs?: number;
  /** Server-side watch timeout per watch (tests shorten it). */
  readonly watchTimeoutSeconds?: () => number;
  /** A watch silent this long past its server-side timeout is restarted. Default 60 s. */
  readonly watchStallGraceMs?: number;
  readonly now?: () => number;
}

export { NodeWaitError };

/**
 * Serves Services, EndpointSlices and this Node from the API server through informers: the same
 * shape as ManifestSource (loadInitial, node, start, stop), plus health for /healthz. Services and
 * EndpointSlices are selected with the service-proxy-name/headless label selector (and Services
 * with upstream's `spec.clusterIP!=None`), the Node with `metadata.name=<node>`. ServiceCIDRs are
 * watched only for handlers that take them, and stay out of whenSynced() and health() (optional,
 * see ServiceCIDRInformer).
 */
export class ApiSource {
  private readonly services: ResourceInformer<V1Service>;
  private readonly slices: ResourceInformer<V1EndpointSlice>;
  private readonly nodes: ResourceInformer<V1Node>;
  private readonly serviceAdapter: HandlerAdapter<V1Service>;
  private readonly sliceAdapter: HandlerAdapter<V1EndpointSlice>;
  private readonly nodeAdapter: HandlerAdapter<V1Node>;
  private readonly serviceCIDRs: ServiceCIDRInformer;
  private readonly stopAbort = new AbortController();
  private readonly now: () => number;
  private resyncTimer: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;

  constructor(private readonly opts: ApiSourceOptions) {
    this.now = opts.now ?? Date.now;
    const log = opts.logger;
    const labelSelector = proxyLabelSelector(opts.serviceProxyName);
    this.serviceAdapter = new HandlerAdapter<V1Service>('Service', log);
    this.sliceAdapter = new HandlerAdapter<V1EndpointSlice>('EndpointSlice', log);
    this.nodeAdapter = new HandlerAdapter<V1Node>('Node', log);
    const common = {
      client: opts.client,
      logger: log,
      backoff: opts.backoff ?? DEFAULT_BACKOFF,
      now: this.now,
      ...(opts.watchTimeoutSeconds ? { watchTimeoutSeconds: opts.watchTimeoutSeconds } : {}),
      ...(opts.watchStallGraceMs !== undefined ? { watchStallGraceMs: opts.watchStallGraceMs } : {}),
    };
    this.services = new ResourceInformer<V1Service>(
      // Headless services have nothing to proxy; upstream does not even watch them.
      { ...common, resource: 'services', path: '/api/v1/services', labelSelector, fieldSelector: 'spec.clusterIP!=None' },
      this.serviceAdapter,
    );
    this.slices = new ResourceInformer<V1EndpointSlice>(
      { ...common, resource: 'endpointslices', path: '/apis/discovery.k8s.io/v1/endpointslices', labelSelector },
      this.sliceAdapter,
    );
    this.nodes = new ResourceInformer<V1Node>(
      { ...common, resource: 'nodes', path: '/api/v1/nodes', fieldSelector: `metadata.name=${opts.nodeName}` },
      this.nodeAdapter,
    );
    this.serviceCIDRs = new ServiceCIDRInformer(common, log);
  }

  /**
   * Starts the Node informer and waits (bounded) for this Node with its addresses, and its pod CIDRs
   * when waitForPodCIDR. Without pod CIDRs in NodeCIDR mode that is fatal (NodeWaitError, and the
   * source is stopped); otherwise a missing Node is logged and the proxy goes on with what it has
   * (node IPs fall back to loopback; the Node is delivered to the handlers when it appears).
   */
  async loadInitial(): Promise<void> {
    this.nodes.start();
    // The Service and EndpointSlice lists are requested now, not at start(): at 10k Services the API
    // server's encoding and our decode take seconds, and they overlap the Node wait, the mode
    // selection and the backend's setup. The adapters hold the objects until start() attaches the
    // handlers, which then hear the same adds and Synced calls as before.
    this.services.start();
    this.slices.start();
    const timeoutMs = this.opts.nodeWaitTimeoutMs ?? (this.opts.waitForPodCIDR ? 5 * 60_000 : 30_000);
    const result = await waitForNode(() => this.node(), {
      nodeName: this.opts.nodeName,
      needPodCIDR: this.opts.waitForPodCIDR,
      timeoutMs,
      pollIntervalMs: this.opts.nodePollIntervalMs ?? 100,
      logger: this.opts.logger,
      signal: this.stopAbort.signal,
    });
    if (result.problem === undefined || this.stopped) return;
    const health = this.nodes.health();
    const detail = { node: this.opts.nodeName, reason: result.problem, waitedMs: timeoutMs, ...(health.lastError ? { apiError: health.lastError } : {}) };
    if (this.opts.waitForPodCIDR) {
      // The source is unusable now; leave no informer retrying behind the caller's back.
      this.stop();
      throw new NodeWaitError(
        `timed out after ${Math.round(timeoutMs / 1000)}s waiting for node "${this.opts.nodeName}" to have a PodCIDR (detectLocalMode is NodeCIDR): ${result.problem}` +
          (health.lastError ? `; last API error: ${health.lastError}` : ''),
      );
    }
    this.opts.logger.warn('Gave up waiting for the Node object; continuing without it', detail);
  }

  /** This Node as last seen by the Node informer. */
  node(): V1Node | undefined {
    return this.nodes.get(this.opts.nodeName);
  }

  /** Objects currently known, for logging and tests. */
  counts(): Record<'Service' | 'EndpointSlice' | 'Node', number> {
    return { Service: this.serviceAdapter.size, EndpointSlice: this.sliceAdapter.size, Node: this.nodeAdapter.size };
  }

  /** Attaches the handlers, starts the Service/EndpointSlice(/ServiceCIDR) informers, resync and the birth cry. */
  start(handlers: ManifestHandlers): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.serviceAdapter.attach(serviceHandler(handlers.services));
    this.sliceAdapter.attach(endpointSliceHandler(handlers.endpointSlices));
    this.nodeAdapter.attach(nodeHandler(handlers.node));
    this.nodes.start();
    this.services.start();
    this.slices.start();
    if (handlers.serviceCIDRs) this.serviceCIDRs.start(handlers.serviceCIDRs);
    if (this.opts.configSyncPeriodMs > 0) {
      this.resyncTimer = setInterval(() => this.resync(), this.opts.configSyncPeriodMs);
      this.resyncTimer.unref();
    }
    if (this.opts.postStartingEvent ?? true) {
      void postBirthCry(this.opts.client.api, this.opts.nodeName, this.opts.logger, this.stopAbort.signal);
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.stopAbort.abort();
    this.services.stop();
    this.slices.stop();
    this.nodes.stop();
    this.serviceCIDRs.stop();
  }

  /** Resolves when all three informers have delivered their initial list. */
  async whenSynced(): Promise<void> {
    await Promise.all([this.services.whenSynced(), this.slices.whenSynced(), this.nodes.whenSynced()]);
  }

  /** Re-delivers every cached object as an unchanged update, as a shared informer's resync. */
  resync(): void {
    this.serviceAdapter.resync();
    this.sliceAdapter.resync();
    this.nodeAdapter.resync();
  }

  health(): InformerHealth[] {
    return [this.services.health(), this.slices.health(), this.nodes.health()];
  }

  /** The ServiceCIDR informer's health (idle when no handler takes ServiceCIDRs), for diagnostics. */
  serviceCIDRHealth(): InformerHealth {
    return this.serviceCIDRs.health();
  }

  /** Epoch ms of the most recent successful exchange with the API server (any informer), if any. */
  lastSuccessfulContact(): number | undefined {
    const times = this.health()
      .map((h) => h.lastContact)
      .filter((t): t is number => t !== undefined);
    return times.length > 0 ? Math.max(...times) : undefined;
  }

  /**
   * True when every started informer has synced and has not been failing for unhealthyAfterMs or
   * longer (reconnects are routine: API server restarts, watch timeouts).
   */
  isHealthy(now: number = this.now()): boolean {
    const grace = this.opts.unhealthyAfterMs ?? 60_000;
    const active = this.health().filter((h) => h.state !== 'idle' && h.state !== 'stopped');
    if (active.length === 0 || this.stopped) return false;
    return active.every((h) => h.synced && (h.failingSince === undefined || now - h.failingSince < grace));
  }
}
