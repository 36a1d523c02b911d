import type { ProxyContext, IPFamily, CommandExecutor, Logger } from '@kube-proxy/core';
import { DryRunIptables } from './dry-run/dry-run-iptables.js';
import { InMemoryTables } from './dry-run/in-memory-tables.js';
import { Iptables } from './iptables-runner.js';
import type { IptablesInterface } from './types.js';

/**
 * The iptables a proxier of `family` writes to for this run: the host's binaries of the variant
 * detection chose, or in --dry-run an in-memory model (returned too, for printing) that touches
 * nothing. Throws, naming `backend`, when the host has no usable iptables.
 */
export function iptablesForRun(
  backend: string,
  family: IPFamily,
  context: Pick<ProxyContext, 'dryRun' | 'host'>,
  executor: CommandExecutor,
  logger: Logger,
): { iptables: IptablesInterface; dryRunTables?: InMemoryTables } {
  if (context.dryRun) {
    const dryRunTables = new InMemoryTables();
    return { iptables: new DryRunIptables(family, dryRunTables), dryRunTables };
  }
  const variant = context.host.iptablesVariant;
  if (!variant) throw new Error(`${backend} backend: no usable iptables binary on this host (${context.host.iptablesVariantReason})`);
  return { iptables: new Iptables({ family, variant, executor, logger }) };
}
