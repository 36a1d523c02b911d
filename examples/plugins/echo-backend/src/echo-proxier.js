import { BoundedFrequencyRunner, ProxierBase, parseDuration, reportSuccessfulSync, writeDryRunBlock } from '@kube-proxy/core';
import { snapshotState } from './state-snapshot.js';

/** As the iptables proxier's burstSyncs. */
const BURST_SYNCS = 2;

/**
 * @typedef {object} EchoProxierOptions
 * @property {import('@kube-proxy/core').IPFamily} family
 * @property {import('@kube-proxy/core').ProxyContext} context
 * @property {import('@kube-proxy/core').Clock} clock
 * @property {import('@kube-proxy/core').Logger} logger
 * @property {import('@kube-proxy/core').ProxierObservers} observers
 * @property {import('./state-file.js').EchoStateFile} stateFile
 */

/**
 * One family of the echo backend. ProxierBase does the event side (Services, EndpointSlices and
 * Nodes into core's ProxyState) and the loop's lifecycle; this class only says what a sync does:
 * take the pending changes, describe the result, write it down. A real backend would program its
 * datapath at that point instead.
 */
export class EchoProxier extends ProxierBase {
  /** @param {EchoProxierOptions} options */
  constructor(options) {
    const { family, context } = options;
    const logger = options.logger.child({ ipFamily: family });
    super({ mode: 'echo', family, nodeName: context.nodeName, logger, observers: options.observers });
    this.context = context;
    this.clock = options.clock;
    this.logger = logger;
    this.stateFile = options.stateFile;
    this.syncs = 0;
    // ProxierBase asks this runner for syncs; the iptables timing flags bound it as they do iptables mode.
    this.runner = new BoundedFrequencyRunner({
      name: `echo-sync-runner-${family}`,
      fn: () => this.syncEcho(),
      minIntervalMs: parseDuration(context.config.iptables.minSyncPeriod),
      maxIntervalMs: parseDuration(context.config.iptables.syncPeriod),
      burstRuns: BURST_SYNCS,
      clock: this.clock,
      logger,
    });
  }

  onStop() {
    // Nothing to release: the echo backend holds no sockets or kernel state.
  }

  async syncEcho() {
    if (this.stopped) return;
    if (!this.state.isInitialized()) {
      this.logger.verbose('Not syncing the echo backend until Services and EndpointSlices have been received');
      return;
    }
    const applied = this.state.applyPendingChanges();
    const snapshot = snapshotState(this.state.serviceMap, this.state.endpointsMap, this.syncs + 1);
    let text;
    try {
      text = await this.stateFile.update(this.family, snapshot);
    } catch (err) {
      this.logger.error('Cannot write the echo state file; retrying', { err: String(err) });
      if (!this.stopped) this.runner.retryAfter(parseDuration(this.context.config.iptables.minSyncPeriod) || 1000);
      return;
    }
    this.syncs++;
    if (this.context.dryRun) {
      await writeDryRunBlock(this.context.dryRunSink, [`# sync ${this.syncs} echo ${this.family}\n`, text]);
    }
    this.logger.info('Echo backend synced', { servicePorts: snapshot.services.length, syncs: this.syncs });
    // /healthz, /metrics and the health-check servers see this sync as they see a kernel backend's.
    await reportSuccessfulSync(
      this.observers,
      {
        family: this.family,
        applied,
        now: this.clock.now(),
        noLocalEndpoints: { internal: 0, external: 0 },
        healthChecks: { services: this.state.healthCheckNodePorts(), localEndpoints: this.state.localReadyEndpoints() },
      },
      this.logger,
    );
    if (!this.first.settled) this.first.resolve();
  }
}
