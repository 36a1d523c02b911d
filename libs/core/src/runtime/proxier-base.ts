import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { Provider } from '../contracts/provider.js';
import type { IPFamily } from '../semantics/model/protocol.js';
import type { Logger } from '../host/logger.js';
import type { BoundedFrequencyRunner } from './bounded-frequency-runner.js';
import { deferred } from './deferred.js';
import type { ProxierObservers } from './observers.js';
import { ProxyState } from './proxy-state.js';

export interface ProxierBaseOptions {
  /** The mode name, for messages ("iptables", "userspace"). */
  readonly mode: string;
  readonly family: IPFamily;
  readonly nodeName: string;
  readonly logger: Logger;
  /** The node agent's health tracker and metrics, when the host app has them. */
  readonly observers?: ProxierObservers;
}

/**
 * What every single-family proxier shares: the sync loop's lifecycle (queue, start, stop, first sync)
 * around the backend's runner, and the event side: Service, EndpointSlice and Node events go into
 * core's ProxyState (which skips malformed objects), are counted in the change metrics as upstream's
 * change trackers count them, and ask for a sync once the initial lists have arrived. A backend
 * extends it with its sync loop; `nodeEvent` lets it react to its own Node first.
 */
export abstract class ProxierBase implements Provider {
  readonly family: IPFamily;
  readonly state: ProxyState;
  protected readonly observers: ProxierObservers;
  /** The backend's sync loop (rate limits, retries); runs the backend's sync function. */
  protected abstract readonly runner: BoundedFrequencyRunner;
  /** Resolved by the backend after its first successful sync; rejected by stop() before that. */
  protected readonly first = deferred();
  protected stopped = false;
  /** This family's Service CIDRs, in the order the source gave them (see onServiceCIDRsChanged). */
  protected serviceCIDRs: readonly string[] = [];
  private loopStarted = false;
  private readonly mode: string;

  protected constructor(options: ProxierBaseOptions) {
    this.family = options.family;
    this.mode = options.mode;
    this.observers = options.observers ?? {};
    this.state = new ProxyState({
      family: options.family,
      nodeName: options.nodeName,
      logger: options.logger,
      onChange: () => {
        if (this.state.isInitialized()) this.sync();
      },
    });
  }

  sync(): void {
    if (this.stopped) return;
    this.reportQueued();
    this.runner.run();
  }

  async syncLoop(): Promise<void> {
    if (this.stopped || this.loopStarted) return;
    this.loopStarted = true;
    this.reportLoopStarted();
    await this.beforeLoop();
    if (this.stopped) return;
    await this.runner.loop();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.runner.stop();
    this.onStop();
    if (!this.first.settled) this.first.reject(new Error(`${this.mode} proxier (${this.family}) stopped before the first sync`));
  }

  firstSync(): Promise<void> {
    return this.first.promise;
  }

  /** Runs once when the sync loop starts, before the first sync (e.g. a canary's first check). */
  protected async beforeLoop(): Promise<void> {
    // Nothing by default.
  }

  /** Releases what the backend holds when it stops (its runner is already stopped). */
  protected abstract onStop(): void;

  /** Called after serviceCIDRs changed (e.g. to re-render a drop rule for unallocated ClusterIPs). */
  protected serviceCIDRsChanged(): void {
    // Only backends that render Service CIDRs care.
  }

  /** Called with this proxier's Node events before ProxyState sees them (deleted: the Node went away). */
  protected nodeEvent(_node: V1Node, _deleted: boolean): void {
    // Most backends do not care.
  }

  onServiceAdd(service: V1Service): void {
    this.state.onServiceAdd(service);
    this.serviceChangeSeen();
  }

  onServiceUpdate(previous: V1Service, current: V1Service): void {
    this.state.onServiceUpdate(previous, current);
    this.serviceChangeSeen();
  }

  onServiceDelete(service: V1Service): void {
    this.state.onServiceDelete(service);
    this.serviceChangeSeen();
  }

  onServicesSynced(): void {
    this.state.onServicesSynced();
  }

  onEndpointSliceAdd(slice: V1EndpointSlice): void {
    this.state.onEndpointSliceAdd(slice);
    this.endpointSliceChangeSeen(slice);
  }

  onEndpointSliceUpdate(previous: V1EndpointSlice, current: V1EndpointSlice): void {
    this.state.onEndpointSliceUpdate(previous, current);
    this.endpointSliceChangeSeen(current);
  }

  onEndpointSliceDelete(slice: V1EndpointSlice): void {
    this.state.onEndpointSliceDelete(slice);
    this.endpointSliceChangeSeen(slice);
  }

  onEndpointSlicesSynced(): void {
    this.state.onEndpointSlicesSynced();
  }

  onNodeAdd(node: V1Node): void {
    this.nodeEvent(node, false);
    this.state.onNodeAdd(node);
  }

  onNodeUpdate(previous: V1Node, current: V1Node): void {
    this.nodeEvent(current, false);
    this.state.onNodeUpdate(previous, current);
  }

  onNodeDelete(node: V1Node): void {
    this.nodeEvent(node, true);
    this.state.onNodeDelete(node);
  }

  onNodeSynced(): void {
    this.state.onNodeSynced();
  }

  /**
   * The source hands over both families' CIDRs; this proxier keeps its own (IPv6 iff written with a
   * ':', as upstream tells families apart by notation) and tells the backend only about real changes,
   * since sources re-deliver the whole list whenever any ServiceCIDR object changes.
   */
  onServiceCIDRsChanged(cidrs: readonly string[]): void {
    const v6 = this.family === 'IPv6';
    const mine = cidrs.filter((c) => c.includes(':') === v6);
    if (mine.length === this.serviceCIDRs.length && mine.every((c, i) => c === this.serviceCIDRs[i])) return;
    this.serviceCIDRs = mine;
    this.serviceCIDRsChanged();
  }

  /** Upstream's Sync(): a change is queued, and late (for /healthz) if no sync programs it in time. */
  private reportQueued(): void {
    this.observers.health?.queuedUpdate(this.family);
    this.observers.metrics?.syncQueued(this.family);
  }

  /**
   * As upstream: the family counts as updated when its sync loop starts (in case no sync ever
   * succeeds), and the informers' initial lists count as the first queued change.
   */
  private reportLoopStarted(): void {
    this.observers.health?.updated(this.family);
    this.observers.metrics?.syncQueued(this.family);
  }

  /** sync_proxy_rules_service_changes_*: every Service event counts, as in upstream's change tracker. */
  private serviceChangeSeen(): void {
    this.observers.metrics?.serviceChangeSeen();
    this.observers.metrics?.serviceChangesPending(this.state.pendingServiceChanges());
  }

  /** sync_proxy_rules_endpoint_changes_*: only slices of this proxier's family, as upstream's tracker. */
  private endpointSliceChangeSeen(slice: V1EndpointSlice): void {
    if (slice?.addressType !== this.family) return;
    this.observers.metrics?.endpointChangeSeen();
    this.observers.metrics?.endpointChangesPending(this.state.pendingEndpointChanges());
  }
}
