import { createRequire } from 'node:module';
import type { BackendPlugin, Clock, CommandExecutor, DetectResult, HostCapabilities, IPFamily, Logger, Provider, ProxyContext } from '@kube-proxy/core';
import { BACKEND_PLUGIN_API_VERSION, DualStackProvider, PROVIDER, resolveBackendPorts, type ProxierObservers } from '@kube-proxy/core';
import { cleanupNftables } from './cleanup.js';
import { HostNft } from './kernel/host-nft.js';
import { MemoryNft } from './kernel/memory-nft.js';
import { familyOf } from './nft/nft-objects.js';
import { NftablesProxier } from './proxier/nftables-proxier.js';

type Container = Parameters<BackendPlugin['register']>[0];

function packageVersion(): string {
  try {
    const require = createRequire(import.meta.url);
    const pkg = require('../package.json') as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

interface Ports {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly executor: CommandExecutor;
  readonly observers?: ProxierObservers;
}

/** Builds the Provider for a run: one NftablesProxier per family (its own table), a DualStackProvider over two. */
export function createNftablesProvider(ports: Ports, context: ProxyContext): Provider {
  const families = context.families;
  if (families.length === 0 || families.length > 2) {
    throw new Error(`nftables backend: expected one or two IP families, got ${JSON.stringify(families)}`);
  }
  const build = (family: IPFamily): NftablesProxier => {
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
      tagDryRunOutput: families.length > 1,
      ...(ports.observers ? { observers: ports.observers } : {}),
    });
  };
  const [first, second] = families as [IPFamily, IPFamily | undefined];
  return second === undefined ? build(first) : new DualStackProvider(build(first), build(second));
}

/** The nftables proxy mode (upstream's GA mode since v1.33). */
export const nftablesBackend: BackendPlugin = {
  apiVersion: BACKEND_PLUGIN_API_VERSION,
  name: 'nftables',
  version: packageVersion(),

  detect(host: HostCapabilities): DetectResult {
    return { usable: host.nftables.available, reason: host.nftables.reason };
  },

  register(container: Container, context: ProxyContext): void {
    const provider = createNftablesProvider(resolveBackendPorts(container, 'nftables'), context);
    container.register<Provider>(PROVIDER, { useValue: provider });
  },

  async cleanup(container: Container, context: ProxyContext): Promise<void> {
    const { logger, executor } = resolveBackendPorts(container, 'nftables');
    if (context.dryRun) {
      logger.info('Dry run: not removing nftables tables');
      return;
    }
    // Without an nft binary nothing of this mode can have been programmed (and nothing can be removed).
    if (!context.host.tools.nft.present) {
      logger.verbose('No nft binary: no nftables leftovers to remove');
      return;
    }
    if (await cleanupNftables({ executor, logger })) throw new Error('nftables backend: encountered an error while deleting its tables');
  },
};

export default nftablesBackend;
