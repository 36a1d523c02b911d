import type { CommandExecutor, IPFamily, IptablesVariant, Logger } from '@kube-proxy/core';
import { Iptables, iptablesBinaries, type IptablesInterface, type Table } from '@kube-proxy/netfilter-iptables';
import { assertRestorePayload } from '@kube-proxy/core';
import { planTableCleanup, renderCleanupRestore } from './cleanup-plan.js';
import { parseSavedTable } from './cleanup-saved-table.js';

export { OWNED_CHAINS } from './cleanup-plan.js';

const CLEANUP_TABLES: readonly Table[] = ['filter', 'nat', 'mangle'];

/**
 * Removes everything this backend programs from one family's iptables, per table: ONE iptables-save,
 * a plan computed in linear time (cleanup-plan.ts), then ONE iptables-restore that removes our jump
 * rules from the built-in chains and flushes and deletes our chains in the same transaction. Upstream's
 * CleanupLeftovers does one restore per table too (after unlinking with one command per jump); doing
 * the unlinking inside the restore means no moment exists in which the Services are unlinked but the
 * chains are still there, and a failed restore leaves the table as it was. Extended, as before, to
 * mangle (canary), KUBE-PROXY-FIREWALL and KUBE-MARK-MASQ. Safe on a clean node: nothing is run for a
 * table with nothing of ours. Returns true if an error was encountered (errors are logged).
 */
export async function cleanupIptables(ipt: IptablesInterface, logger: Logger): Promise<boolean> {
  let encounteredError = false;
  for (const table of CLEANUP_TABLES) {
    if (!(await cleanupTable(ipt, table, logger))) encounteredError = true;
  }
  return encounteredError;
}

/** One table of cleanupIptables; false when an error was encountered (logged). */
async function cleanupTable(ipt: IptablesInterface, table: Table, logger: Logger): Promise<boolean> {
  let save: string;
  try {
    save = await ipt.saveTable(table);
  } catch (err) {
    logger.error('Failed to execute iptables-save', { iptables: ipt.description, table, error: String(err) });
    return false;
  }
  const saved = await parseSavedTable(save, table);
  if (!saved) return true;
  const plan = planTableCleanup(saved);
  for (const { chain, referencedFrom } of plan.kept) {
    logger.warn('Not deleting chain still referenced by rules kube-proxy does not own', { iptables: ipt.description, table, chain, referencedFrom });
  }
  const payload = renderCleanupRestore(plan);
  if (payload === undefined) return true;
  try {
    // The chain names and rule texts were read back from iptables-save: checked like every rendered
    // payload, so a line that would break the transaction is refused instead of written.
    assertRestorePayload(payload, plan.jumps.length + 2 * plan.deletable.length + 2);
    // wholeTables: on iptables-nft a `-S` first makes the tool fetch the table whole instead of
    // inserting each of the ~120k named chains into its sorted list (rules × chains otherwise; see
    // core's nft-restore-cache-hint.ts). It changes nothing in the table; legacy ignores it.
    await ipt.restore(payload, { noFlush: true, counters: true, wholeTables: true });
    logger.info('Removed iptables rules and chains', { iptables: ipt.description, table, jumps: plan.jumps.length, chains: plan.deletable.length });
    return true;
  } catch (err) {
    logger.error('Failed to execute iptables-restore', { iptables: ipt.description, table, error: String(err) });
    return false;
  }
}

/** Whether `binary --version` runs: the variant/family exists on this host. */
async function binaryWorks(executor: CommandExecutor, binary: string): Promise<boolean> {
  const result = await executor.run(binary, ['--version'], { timeoutMs: 10_000 });
  return result.exitCode === 0;
}

export interface CleanupAllOptions {
  readonly executor: CommandExecutor;
  readonly logger: Logger;
  readonly families?: readonly IPFamily[];
  readonly variants?: readonly IptablesVariant[];
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * `--cleanup` for the iptables backend: cleanupIptables for IPv4 and IPv6, with every iptables variant
 * (nft, legacy) whose binary exists on the host. Returns true if an error was encountered.
 */
export async function cleanupAllIptables(options: CleanupAllOptions): Promise<boolean> {
  const { executor, logger } = options;
  let encounteredError = false;
  for (const variant of options.variants ?? (['nft', 'legacy'] as const)) {
    for (const family of options.families ?? (['IPv4', 'IPv6'] as const)) {
      const binaries = iptablesBinaries(family, variant);
      if (!(await binaryWorks(executor, binaries.iptables))) {
        logger.debug('iptables variant not present; nothing to clean up', { binary: binaries.iptables });
        continue;
      }
      const ipt = new Iptables({
        family,
        variant,
        executor,
        logger,
        ...(options.env ? { env: options.env } : {}),
      });
      if (await cleanupIptables(ipt, logger)) encounteredError = true;
    }
  }
  return encounteredError;
}
