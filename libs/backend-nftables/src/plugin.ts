import type { DetectResult, HostCapabilities } from '@kube-proxy/core';
import { defineBackend } from '@kube-proxy/core';
import { cleanupNftables } from './cleanup.js';
import { HostNft } from './kernel/host-nft.js';
import { MemoryNft } from './kernel/memory-nft.js';
import { familyOf } from './nft/nft-objects.js';
import { NftablesProxier } from './proxier/nftables-proxier.js';
import { defineNftablesModeMetrics } from './metrics.js';
import { nftablesTracer } from './trace/nftables-tracer.js';

/** The nftables proxy mode (upstream's GA mode since v1.33): one NftablesProxier per family, each its own table. */
export const nftablesBackend = defineBackend({
  name: 'nftables',
  metrics: defineNftablesModeMetrics,
  packageJson: new URL('../package.json', import.meta.url),
  detect(host: HostCapabilities): DetectResult {
    return { usable: host.nftables.available, reason: host.nftables.reason };
  },
  createProxier(family, { ports, context, tagDryRunOutput }) {
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
