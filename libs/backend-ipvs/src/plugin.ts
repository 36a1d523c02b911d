import {
  BACKEND_PLUGIN_API_VERSION,
  COMMAND_EXECUTOR,
  LOGGER,
  type BackendPlugin,
  type CommandExecutor,
  type DetectResult,
  type HostCapabilities,
  type Logger,
  type ProxyContext,
} from '@kube-proxy/core';
import { createRequire } from 'node:module';
import { cleanupIpvs } from './cleanup.js';

/** The tsyringe container type, as the plugin contract spells it. */
type Container = Parameters<BackendPlugin['register']>[0];

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

/**
 * IPVS mode. Detection is real (it decides whether `auto` picks IPVS); the proxier itself is the next
 * roadmap item, so register() refuses clearly instead of pretending to program IPVS.
 */
export const ipvsBackend: BackendPlugin = {
  apiVersion: BACKEND_PLUGIN_API_VERSION,
  name: 'ipvs',
  version: pkg.version,
  detect(host: HostCapabilities): DetectResult {
    if (!host.ipvs.available) return { usable: false, reason: host.ipvs.reason };
    return { usable: true, reason: host.ipvs.reason };
  },
  register(): void {
    throw new Error(
      'the ipvs proxier is not implemented in this version of kube-proxy-ts (it is on the roadmap); use --proxy-mode=iptables',
    );
  },
  /** --cleanup: removes what an IPVS kube-proxy (upstream's or a later version of this one) left. */
  async cleanup(container: Container, context: ProxyContext): Promise<void> {
    const logger = container.resolve<Logger>(LOGGER).child({ backend: 'ipvs' });
    if (context.dryRun) {
      logger.info('Dry run: not removing IPVS leftovers');
      return;
    }
    const executor = container.resolve<CommandExecutor>(COMMAND_EXECUTOR);
    if (await cleanupIpvs(executor, context.host, logger)) throw new Error('ipvs backend: encountered an error while cleaning up');
  },
};
