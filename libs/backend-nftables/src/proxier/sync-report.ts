import type { AppliedChanges, IPFamily, Logger, ProxierObservers, ProxyState, TextSink } from '@kube-proxy/core';
import { writeDryRunBlock } from '@kube-proxy/core';
import type { MemoryNftTable } from '../nft/memory-table.js';

/**
 * What upstream's syncProxyRules publishes after a successful transaction, in its order: network
 * programming latency of the EndpointSlice changes applied, the no-local-endpoints gauge, health
 * "updated", the last-sync timestamp, then the Services' health-check ports and local endpoints.
 */
export async function reportSuccessfulSync(
  observers: ProxierObservers,
  family: IPFamily,
  noLocalEndpoints: { readonly internal: number; readonly external: number },
  state: ProxyState,
  applied: AppliedChanges,
  now: number,
  logger: Logger,
): Promise<void> {
  const { metrics, health, serviceHealth } = observers;
  if (metrics) {
    for (const times of applied.endpoints.lastChangeTriggerTimes.values()) {
      for (const t of times) metrics.networkProgrammingLatency(family, (now - t) / 1000);
    }
    metrics.noLocalEndpoints(family, noLocalEndpoints);
  }
  health?.updated(family);
  metrics?.syncSucceeded(family);
  if (serviceHealth) {
    // The rules are in place whatever happens here: a failing health server must not fail the sync.
    try {
      await serviceHealth.syncServices(state.healthCheckNodePorts(), family);
      await serviceHealth.syncEndpoints(state.localReadyEndpoints(), family);
    } catch (err) {
      logger.error('Error syncing healthcheck services', { err: String(err) });
    }
  }
}

/**
 * --dry-run: `header`, then the table in upstream's nft.Dump() form, in pieces of ~256 kB that wait
 * for stdout (a 10k-service table prints as ~30 MB; see writeDryRunBlock).
 */
export async function writeDryRunTable(sink: TextSink, header: string, table: MemoryNftTable): Promise<void> {
  await writeDryRunBlock(sink, (function* () {
    yield header;
    let piece = '';
    for (const line of table.dumpLines()) {
      piece += line + '\n';
      if (piece.length >= 256 * 1024) {
        yield piece;
        piece = '';
      }
    }
    yield piece === '' ? '\n' : piece;
  })());
}
