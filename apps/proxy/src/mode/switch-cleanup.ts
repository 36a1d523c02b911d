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

/**
 * Removes the leftovers of the modes a switch to `plugin` leaves behind (never in --dry-run). A
 * failure is logged and the proxy starts anyway: stale rules of another mode must not keep this
 * one from serving.
 */
export async function cleanupOtherModes(plugin: BackendPlugin, registry: BackendRegistry, scope: DependencyContainer, context: ProxyContext, logger: Logger): Promise<void> {
  if (context.dryRun) return;
  for (const name of modesToClean(plugin.name)) {
    const other = registry.get(name);
    if (!other?.cleanup) continue;
    try {
      await other.cleanup(scope, context);
    } catch (err) {
      logger.error('Failed to remove the leftovers of another proxy mode', { mode: name, err: (err as Error).message });
    }
  }
}
