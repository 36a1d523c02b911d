import type { CommandExecutor, IPFamily, IptablesVariant, Logger } from '@kube-proxy/core';
import { Iptables, iptablesBinaries } from '../iptables-runner.js';
import type { IptablesInterface, Table } from '../types.js';
import type { JumpRule, LeftoverTable, OwnedChain } from './leftover-rules.js';
import { planLeftoverTable } from './plan-leftover-table.js';

/*
 * --cleanup of a backend's iptables leftovers through the one iptables runner (iptables-save and
 * iptables-restore of each table, serialised like every other invocation): upstream's
 * cleanupIptablesLeftovers, done as one transaction per table.
 *
 * Why every variant: a proxy picks nft or legacy from kubelet's KUBE-IPTABLES-HINT chain, and that
 * need not be the host's default `iptables` (Debian's default is iptables-nft). Cleaning only the
 * default left the legacy tables' jumps and chains behind, and with them references that keep the
 * KUBE-* ipsets "in use".
 */

const TABLES: readonly LeftoverTable[] = ['nat', 'filter'];
const VARIANTS: readonly IptablesVariant[] = ['nft', 'legacy'];
const FAMILIES: readonly IPFamily[] = ['IPv4', 'IPv6'];
const VERSION_TIMEOUT_MS = 10_000;

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Removes `jumps` and `chains` from the nat and filter tables `iptables` (one family and variant)
 * holds. Returns true if an error was encountered (logged); an owned chain a foreign rule still
 * references is one, as when upstream's `-X` of it fails.
 */
export async function cleanupIptablesLeftovers(
  iptables: IptablesInterface,
  logger: Logger,
  jumps: readonly JumpRule[],
  chains: readonly OwnedChain[],
): Promise<boolean> {
  let encounteredError = false;
  for (const table of TABLES) {
    let save: string;
    try {
      save = await iptables.saveTable(table satisfies Table);
    } catch (err) {
      encounteredError = true;
      logger.error('Failed to execute iptables-save', { iptables: iptables.description, table, error: message(err) });
      continue;
    }
    const plan = planLeftoverTable(table, save, jumps, chains);
    for (const { chain, referencedFrom } of plan.kept) {
      encounteredError = true;
      logger.error('Not deleting chain still referenced by rules kube-proxy does not own', { iptables: iptables.description, table, chain, referencedFrom });
    }
    if (plan.payload === undefined) continue;
    try {
      await iptables.restore(plan.payload, { noFlush: true, counters: true });
    } catch (err) {
      encounteredError = true;
      logger.error('Failed to execute iptables-restore', { iptables: iptables.description, table, error: message(err) });
    }
  }
  return encounteredError;
}

/** Whether `binary --version` runs: this variant of this family exists on the host. */
async function binaryWorks(executor: CommandExecutor, binary: string): Promise<boolean> {
  const result = await executor.run(binary, ['--version'], { timeoutMs: VERSION_TIMEOUT_MS });
  return result.exitCode === 0;
}

/**
 * Removes `jumps` and `chains` with every iptables variant (nft, legacy) and family (IPv4, IPv6) whose
 * binary runs; a missing one is skipped (debug log). One iptables-save and at most one iptables-restore
 * per table and variant. Returns true if an error was encountered (logged).
 */
export async function cleanupIptablesLeftoversInEveryVariant(
  executor: CommandExecutor,
  logger: Logger,
  jumps: readonly JumpRule[],
  chains: readonly OwnedChain[],
): Promise<boolean> {
  let encounteredError = false;
  for (const variant of VARIANTS) {
    for (const family of FAMILIES) {
      const binaries = iptablesBinaries(family, variant);
      if (!(await binaryWorks(executor, binaries.iptables))) {
        logger.debug('iptables variant not present; nothing to clean up', { binary: binaries.iptables });
        continue;
      }
      const iptables = new Iptables({ family, variant, executor, logger });
      if (await cleanupIptablesLeftovers(iptables, logger, jumps, chains)) encounteredError = true;
    }
  }
  return encounteredError;
}
