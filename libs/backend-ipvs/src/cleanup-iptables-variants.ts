import type { CommandExecutor, IPFamily, IptablesVariant, JumpRule, Logger, OwnedChain } from '@kube-proxy/core';
import { iptablesBinaries } from '@kube-proxy/core';
import { cleanupIptablesLeftovers } from './cleanup-iptables.js';

/*
 * Why every variant: an IPVS proxy picks nft or legacy from kubelet's KUBE-IPTABLES-HINT chain, and
 * that need not be the host's default `iptables` (Debian's default is iptables-nft). Cleaning only the
 * default left the legacy tables' jumps and chains behind, and with them references that keep the
 * KUBE-* ipsets "in use". As the iptables backend's cleanupAllIptables: each variant whose binary runs.
 */

const VARIANTS: readonly IptablesVariant[] = ['nft', 'legacy'];
const FAMILIES: readonly IPFamily[] = ['IPv4', 'IPv6'];
const VERSION_TIMEOUT_MS = 10_000;

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
      if (await cleanupIptablesLeftovers(executor, logger, binaries, jumps, chains)) encounteredError = true;
    }
  }
  return encounteredError;
}
