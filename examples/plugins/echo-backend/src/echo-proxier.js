import { newSyncStats, parseDuration, SyncingProxier } from '@kube-proxy/core';
import { snapshotState } from './state-snapshot.js';

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
 * One family of the echo backend, on core's one sync engine (SyncingProxier, core >= 0.3.0): the
 * engine does the event side (Services, EndpointSlices and Nodes into core's ProxyState), the loop,
 * retries, health, metrics and the --dry-run block; this class only says what a sync does: describe
 * the state, write it down. A real backend would program its datapath at that point instead.
 */
export class EchoProxier extends SyncingProxier {
  /** @param {EchoProxierOptions} options */
  constructor(options) {
    const { family, context } = options;
    const minSyncPeriodMs = parseDuration(context.config.iptables.minSyncPeriod);
    super({
      mode: 'echo',
      family,
      nodeName: context.nodeName,
      logger: options.logger.child({ ipFamily: family }),
      observers: options.observers,
      clock: options.clock,
      // The iptables timing flags bound it as they do iptables mode; a failed write is retried soon.
      syncPeriodMs: minSyncPeriodMs || 1000,
      minSyncPeriodMs,
      maxSyncIntervalMs: parseDuration(context.config.iptables.syncPeriod),
      // Every sync writes the whole state.
      alwaysFull: true,
      dryRunSink: context.dryRun ? context.dryRunSink : undefined,
    });
    this.context = context;
    this.stateFile = options.stateFile;
    this.stats = newSyncStats();
  }

  /** @returns {Promise<import('@kube-proxy/core').SyncResult>} */
  async syncOnce() {
    const snapshot = snapshotState(this.state.serviceMap, this.state.endpointsMap, this.stats.syncs + 1);
    let text;
    try {
      text = await this.stateFile.update(this.family, snapshot);
    } catch (err) {
      this.logger.error('Cannot write the echo state file; retrying', { err: String(err) });
      return { outcome: 'failed' };
    }
    this.logger.info('Echo backend synced', { servicePorts: snapshot.services.length, syncs: this.stats.syncs + 1 });
    return {
      outcome: 'synced',
      // The echo backend routes no traffic: no service is short of local endpoints because of it.
      noLocalEndpoints: { internal: 0, external: 0 },
      ...(this.context.dryRun ? { dryRunHeader: `# sync ${this.stats.syncs + 1} echo ${this.family}\n`, dryRunOutput: [text] } : {}),
    };
  }
}
