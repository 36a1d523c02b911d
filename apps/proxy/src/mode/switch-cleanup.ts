import type { BackendPlugin, Logger, ProxyContext } from '@kube-proxy/core';
import type { DependencyContainer } from 'tsyringe';
import type { BackendRegistry } from '../registry/backend-registry.js';

/**
 * The modes whose leftovers a starting mode removes, as upstream's platformCleanup: nftables
 * removes what the iptables-based modes (iptables, ipvs) left, and they remove the nftables
 * tables. Other modes (userspace, plugins) leave the others alone.
 */
export function modesToClean(mode: string): readonly string[] {
  if (mode === 'nftables') return ['iptables', 'ipvs'];
  if (mode === 'iptables' || mode === 'ipvs') return ['nftables'];
  return [];
}

export interface SwitchCleanupOptions {
  /** The starting mode. */
  readonly plugin: BackendPlugin;
  readonly registry: BackendRegistry;
  readonly scope: DependencyContainer;
  readonly context: ProxyContext;
  readonly logger: Logger;
  /** Settles with the starting mode's first successful sync (the provider's firstSync()); rejects if it stops before one. */
  readonly firstSync: Promise<void>;
}

/**
 * Removes the leftovers of the modes a switch to `plugin` leaves behind — only AFTER the starting
 * mode's first successful sync, so the node is never without rules: until then the old mode's rules
 * keep serving (upstream cleans before the new proxier starts, which leaves the node without Service
 * rules for as long as the cleanup and the first sync take). While both rule sets exist, a new
 * connection is NATed by whichever NAT chain sees it first (both send it to the same endpoints) and an
 * existing one keeps its conntrack entry. Never in --dry-run; a proxy stopped before its first sync
 * removes nothing. A failure is logged, never fatal: stale rules of another mode must not stop this one.
 */
export async function cleanupOtherModes(options: SwitchCleanupOptions): Promise<void> {
  const { plugin, registry, scope, context, logger } = options;
  // Observed even when nothing is to be cleaned: a first sync that never comes (a stop) must not be an unhandled rejection.
  options.firstSync.catch(() => undefined);
  const others = modesToClean(plugin.name).filter((name) => registry.get(name)?.cleanup !== undefined);
  if (context.dryRun || others.length === 0) return;
  try {
    await options.firstSync;
  } catch {
    logger.info('No successful sync; the leftovers of other proxy modes stay in place', { modes: others });
    return;
  }
  for (const name of others) {
    try {
      await registry.get(name)?.cleanup?.(scope, context);
      logger.info('Removed the leftovers of another proxy mode after the first successful sync', { mode: name });
    } catch (err) {
      logger.error('Failed to remove the leftovers of another proxy mode', { mode: name, err: (err as Error).message });
    }
  }
}
