import type { CommandExecutor, Logger } from '@kube-proxy/core';
import { TABLE_NAME, type NftFamily } from './nft/nft-objects.js';

const FAMILIES: readonly NftFamily[] = ['ip', 'ip6'];

/**
 * Upstream's nftables CleanupLeftovers: deletes the kube-proxy table of both families (everything
 * this mode programs lives in it). An absent table is not an error. Returns true if an error was
 * encountered (logged).
 */
export async function cleanupNftables(options: { executor: CommandExecutor; logger: Logger; binary?: string }): Promise<boolean> {
  const { executor, logger } = options;
  const binary = options.binary ?? 'nft';
  let encounteredError = false;
  for (const family of FAMILIES) {
    const result = await executor.run(binary, ['delete', 'table', family, TABLE_NAME], { timeoutMs: 120_000 });
    if (result.exitCode === 0) {
      logger.info('Deleted the kube-proxy nftables table', { family });
      continue;
    }
    const text = `${result.stderr}${result.stdout}`;
    if (result.spawnError === undefined && /No such file or directory/i.test(text)) continue;
    encounteredError = true;
    logger.error('Error cleaning up nftables rules', { family, error: result.spawnError ?? text.trim() });
  }
  return encounteredError;
}
