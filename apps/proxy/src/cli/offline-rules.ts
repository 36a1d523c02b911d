/**
 * `trace` / `explain` without --live: the rules the chosen mode would program for the objects of
 * --manifests or the API server, made by the very pipeline of `--dry-run --once` with the dry-run sink
 * a buffer. No server opens, no host tuning runs, and the executor refuses anything but reads.
 */
import {
  PROVIDER,
  PROXY_CONTEXT,
  SYSCTL,
  systemClock,
  type BackendPlugin,
  type IPFamily,
  type KubeProxyConfiguration,
  type Logger,
  type ParsedFlags,
  type Provider,
  type ProxyContext,
  type Sysctl,
  type V1Node,
} from '@kube-proxy/core';
import { ProxyAgent, fanOutNodeHandler } from '../agent/index.js';
import { selectMode } from '../mode/select-mode.js';
import { splitDryRunBlocks } from '../trace/dry-run-blocks.js';
import { ObjectStore } from '../trace/object-store.js';
import { openRunHost, openRunObjects, type RunHost } from './run-setup.js';

/** What an offline run rendered, and from what. */
export interface OfflineRules {
  readonly run: RunHost;
  readonly plugin: BackendPlugin;
  readonly config: KubeProxyConfiguration;
  readonly families: readonly IPFamily[];
  /** Each family's dry-run block, without its `# sync` header. */
  readonly blocks: ReadonlyMap<IPFamily, string>;
  /** The objects the rules were made from. */
  readonly objects: ObjectStore;
  /** The proxy's own Node (from the source), if it has one. */
  readonly node: V1Node | undefined;
  readonly nodeIPs: Partial<Record<IPFamily, string>>;
}

export async function renderOfflineRules(parsed: ParsedFlags, config: KubeProxyConfiguration, logger: Logger): Promise<OfflineRules> {
  const options = { ...parsed.options, dryRun: true, once: true };
  const run = await openRunHost(options, config, logger);
  const objects = await openRunObjects(run, options, config, logger);
  const plugin = await selectMode({ requested: config.mode, registry: run.registry, host: run.host, logger, dryRun: true, config });
  let text = '';
  const context: ProxyContext = {
    config,
    nodeName: run.nodeName,
    nodeIPs: objects.nodeIPs,
    families: objects.families,
    dryRun: true,
    dryRunSink: { write: (piece) => void (text += piece) },
    host: run.host,
  };
  // The agent only for what backends resolve (metrics, health): never started, serving nothing.
  const agent = new ProxyAgent({
    config,
    mode: plugin.name,
    nodeName: run.nodeName,
    dryRun: true,
    serve: { healthz: false, metrics: false, serviceHealthChecks: false },
    logger,
    clock: systemClock,
    sysctl: run.base.resolve<Sysctl>(SYSCTL),
    defaultMetrics: false,
  });
  const scope = run.base.createChildContainer();
  scope.register(PROXY_CONTEXT, { useValue: context });
  agent.register(scope);
  await plugin.register(scope, context);
  const provider = scope.resolve<Provider>(PROVIDER);
  const store = new ObjectStore();
  await syncOnce(objects, provider, agent, store);
  return {
    run,
    plugin,
    config,
    families: objects.families,
    blocks: splitDryRunBlocks(text, objects.families),
    objects: store,
    node: objects.node,
    nodeIPs: objects.nodeIPs,
  };
}

/** Feeds the source to the provider until its first sync is done (or its loop fails), then stops both. */
async function syncOnce(
  objects: Awaited<ReturnType<typeof openRunObjects>>,
  provider: Provider,
  agent: ProxyAgent,
  store: ObjectStore,
): Promise<void> {
  objects.source.start(
    objects.validation.wrap(
      store.tap({
        services: provider,
        endpointSlices: provider,
        node: fanOutNodeHandler(provider, agent.nodeHandler),
        ...(typeof provider.onServiceCIDRsChanged === 'function' ? { serviceCIDRs: provider as Required<Pick<Provider, 'onServiceCIDRsChanged'>> } : {}),
      }),
    ),
  );
  const loop = provider.syncLoop();
  try {
    await Promise.race([provider.firstSync(), loop.then(() => Promise.reject(new Error('the sync loop ended before the first sync')))]);
  } finally {
    objects.source.stop();
    provider.stop();
    await loop.catch(() => undefined);
  }
}
