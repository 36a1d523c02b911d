import type { BackendPorts, DetectResult, HostCapabilities, MetricsRegistry, ProxyContext } from '@kube-proxy/core';
import { defineBackend, isFeatureEnabled, METRICS_REGISTRY, resolveBackendPorts, resolveOptional } from '@kube-proxy/core';
import { FdBudget, proxyFdBudget } from '@kube-proxy/userspace-proxy';
import { cleanupNftables } from './cleanup.js';
import { HostNft } from './kernel/host-nft.js';
import { MemoryNft } from './kernel/memory-nft.js';
import { familyOf } from './nft/nft-objects.js';
import { NftablesProxier } from './proxier/nftables-proxier.js';
import { defineNftablesModeMetrics } from './metrics.js';
import { nftablesTracer } from './trace/nftables-tracer.js';
import { LOCALHOST_NODEPORTS_GATE, LocalhostMetrics, type LocalhostRun } from './localhost/index.js';

/** The host's ports, and its metric registry for the localhost NodePort metrics (defined only when their gate is on). */
interface NftablesPorts extends BackendPorts {
  readonly registry?: MetricsRegistry;
}

/** Localhost NodePorts (KEP-6032): one descriptor budget and one set of metrics for both families. */
function prepareLocalhost(ports: NftablesPorts, context: ProxyContext): LocalhostRun | undefined {
  if (!isFeatureEnabled(context.config.featureGates, LOCALHOST_NODEPORTS_GATE) || context.dryRun) return undefined;
  const budget = new FdBudget(proxyFdBudget());
  if (ports.registry === undefined) return { budget };
  const metrics = new LocalhostMetrics(ports.registry);
  metrics.readBeforeScrape(ports.registry, ports.executor, context.families);
  return { budget, observer: metrics };
}

/** The nftables proxy mode (upstream's GA mode since v1.33): one NftablesProxier per family, each its own table. */
export const nftablesBackend = defineBackend<NftablesPorts, LocalhostRun | undefined>({
  name: 'nftables',
  resolvePorts: (container, name) => ({ ...resolveBackendPorts(container, name), registry: resolveOptional<MetricsRegistry>(container, METRICS_REGISTRY) }),
  prepare: prepareLocalhost,
  metrics: defineNftablesModeMetrics,
  packageJson: new URL('../package.json', import.meta.url),
  detect(host: HostCapabilities): DetectResult {
    return { usable: host.nftables.available, reason: host.nftables.reason };
  },
  createProxier(family, { ports, context, shared: localhost, tagDryRunOutput }) {
    // --dry-run never runs nft (it need not even be installed): the table lives in memory.
    const memory = context.dryRun ? new MemoryNft(familyOf(family)) : undefined;
    return new NftablesProxier({
      family,
      context,
      nft: memory ?? new HostNft(ports.executor, familyOf(family)),
      executor: ports.executor,
      clock: ports.clock,
      logger: ports.logger,
      ...(memory ? { dryRunTable: memory.table } : {}),
      tagDryRunOutput,
      observers: ports.observers,
      ...(localhost ? { localhost } : {}),
    });
  },
  async cleanup(ports, context) {
    // Without an nft binary nothing of this mode can have been programmed (and nothing can be removed).
    if (!context.host.tools.nft.present) {
      ports.logger.verbose('No nft binary: no nftables leftovers to remove');
      return false;
    }
    return cleanupNftables({ executor: ports.executor, logger: ports.logger });
  },
  cleanupSubject: 'nftables tables',
  // `kube-proxy trace` / `explain`: over our table or upstream's, from --dry-run or the kernel.
  tracer: nftablesTracer,
});

export default nftablesBackend;
