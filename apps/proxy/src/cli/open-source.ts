/**
 * The source of Services, EndpointSlices and the Node for a run: the manifests directory when
 * --manifests is given, else the API server. Loaded (initial lists read) before it is returned,
 * so the node's IPs and the mode can be decided from it.
 */
import { parseDuration, type KubeProxyConfiguration, type Logger, type ParsedFlags } from '@kube-proxy/core';
import { ManifestSource } from '../sources/manifests/manifest-source.js';
import type { ObjectValidation } from '../sources/validating-handlers.js';
// The API source loads @kubernetes/client-node (~0.6 s): imported only when the API is the source.
import type { ApiSource } from '../sources/api/index.js';
import { noopNodeEventRecorder, type NodeEventRecorder } from '../agent/index.js';
import { apiNodeStatusClient, type NodeStatusClient } from '../node/node-status-client.js';

export interface OpenedSource {
  readonly source: ManifestSource | ApiSource;
  /** The API source, when that is the source: its health feeds /healthz. */
  readonly apiSource: ApiSource | undefined;
  /** Node events about failed host setup: posted only through the API source, never in --dry-run. */
  readonly nodeEvents: NodeEventRecorder;
  /** Where the KubeProxyReady Node condition is written: the API source's client, never in --dry-run. */
  readonly nodeStatus: NodeStatusClient | undefined;
}

export async function openSource(
  options: ParsedFlags['options'],
  config: KubeProxyConfiguration,
  nodeName: string,
  validation: ObjectValidation,
  logger: Logger,
): Promise<OpenedSource> {
  if (options.manifests) {
    const manifests = new ManifestSource({
      path: options.manifests,
      nodeName,
      serviceProxyName: options.serviceProxyName ?? '',
      logger: logger.child({ source: 'manifests' }),
      onMalformed: (kind) => validation.countInvalid(kind),
      // --once ends at the first sync: no file change will be read, so no object needs keeping.
      followChanges: !options.once,
    });
    await manifests.loadInitial();
    logger.info('Loaded manifests', { path: options.manifests, ...manifests.counts() });
    return { source: manifests, apiSource: undefined, nodeEvents: noopNodeEventRecorder, nodeStatus: undefined };
  }
  const apiLogger = logger.child({ source: 'api' });
  const { ApiNodeEventRecorder, ApiSource, createKubeClient, watchTuningFromEnv } = await import('../sources/api/index.js');
  const client = createKubeClient({
    kubeconfig: config.clientConnection.kubeconfig,
    master: options.master,
    clientConnection: config.clientConnection,
    logger: apiLogger,
  });
  const api = new ApiSource({
    client,
    nodeName,
    serviceProxyName: options.serviceProxyName ?? '',
    logger: apiLogger,
    configSyncPeriodMs: parseDuration(config.configSyncPeriod),
    waitForPodCIDR: config.detectLocalMode === 'NodeCIDR',
    postStartingEvent: !options.dryRun, // the event is a write to the cluster
    ...watchTuningFromEnv(process.env),
  });
  await api.loadInitial();
  const nodeEvents = options.dryRun ? noopNodeEventRecorder : new ApiNodeEventRecorder({ api: client.api, nodeName, logger: apiLogger });
  const nodeStatus = options.dryRun ? undefined : apiNodeStatusClient(client.api);
  return { source: api, apiSource: api, nodeEvents, nodeStatus };
}
