import {
  BACKEND_PLUGIN_API_VERSION,
  COMMAND_EXECUTOR,
  LOGGER,
  type BackendPlugin,
  type CommandExecutor,
  type DetectResult,
  type Logger,
  type ProxyContext,
} from '@kube-proxy/core';
import { createRequire } from 'node:module';
import { cleanupUserspace } from './cleanup.js';

/** The tsyringe container type, as the plugin contract spells it. */
type Container = Parameters<BackendPlugin['register']>[0];

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

/**
 * Userspace mode: an L4 proxy in this process. It needs only sockets (capture rules are optional), so
 * it is usable everywhere; the proxier is a separate roadmap item, so register() refuses clearly.
 */
export const userspaceBackend: BackendPlugin = {
  apiVersion: BACKEND_PLUGIN_API_VERSION,
  name: 'userspace',
  version: pkg.version,
  detect(): DetectResult {
    return { usable: true, reason: 'the userspace proxy needs only sockets; capture rules need iptables' };
  },
  register(): void {
    throw new Error(
      'the userspace proxier is not implemented in this version of kube-proxy-ts (it is on the roadmap); use --proxy-mode=iptables',
    );
  },
  /** --cleanup: removes the capture chains of upstream's old userspace proxier. */
  async cleanup(container: Container, context: ProxyContext): Promise<void> {
    const logger = container.resolve<Logger>(LOGGER).child({ backend: 'userspace' });
    if (context.dryRun) {
      logger.info('Dry run: not removing userspace leftovers');
      return;
    }
    const executor = container.resolve<CommandExecutor>(COMMAND_EXECUTOR);
    if (await cleanupUserspace(executor, context.host, logger)) throw new Error('userspace backend: encountered an error while cleaning up');
  },
};
