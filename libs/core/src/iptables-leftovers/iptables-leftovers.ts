import type { CommandExecutor, CommandResult } from '../ports/command-executor.js';
import type { Logger } from '../ports/logger.js';

/*
 * Just enough iptables for --cleanup: remove jump rules, flush and delete chains, one command each
 * (`iptables -w 5 -t <table> -D/-F/-X`), tolerating what is already gone. Every backend's --cleanup
 * needs it (the ipvs and userspace modes left iptables chains too) and backends cannot import each
 * other, so it lives in core.
 */

export type LeftoverTable = 'nat' | 'filter';

/** A jump rule `-A <from> -m comment --comment <comment> -j <to>` in `table`. */
export interface JumpRule {
  readonly table: LeftoverTable;
  readonly from: string;
  readonly to: string;
  readonly comment?: string;
  /** Extra match arguments before the comment, as the rule was written. */
  readonly match?: readonly string[];
}

export interface OwnedChain {
  readonly table: LeftoverTable;
  readonly chain: string;
}

const WAIT = ['-w', '5'];
const MAX_DUPLICATES = 16;

/**
 * iptables' "nothing to do" answers: the rule or chain does not exist, in legacy and nft wordings
 * (upstream's IsNotFoundError strings; the exit code varies: iptables-nft exits 2 when the jump
 * target is missing).
 */
export function isNotFound(result: CommandResult): boolean {
  return (
    result.exitCode !== null &&
    result.exitCode !== 0 &&
    /does a matching rule exist|No chain\/target\/match by that name|does not exist|No such file or directory/i.test(result.stderr + result.stdout)
  );
}

function describe(result: CommandResult): string {
  return result.spawnError ?? `exit ${String(result.exitCode)}: ${(result.stderr || result.stdout).trim()}`;
}

/**
 * Unlinks `jumps`, then flushes every chain of `chains` before deleting any (so links between them
 * go first), as upstream's cleanupIptablesLeftovers. Returns true if an error other than absence
 * was encountered (logged).
 */
export async function cleanupChains(
  executor: CommandExecutor,
  logger: Logger,
  binary: string,
  jumps: readonly JumpRule[],
  chains: readonly OwnedChain[],
): Promise<boolean> {
  let encounteredError = false;
  /** Runs one command; true when it changed something (exit 0). */
  const run = async (args: readonly string[], what: string): Promise<boolean> => {
    const result = await executor.run(binary, [...WAIT, ...args]);
    if (result.exitCode === 0) return true;
    if (!isNotFound(result)) {
      encounteredError = true;
      logger.error(`Error ${what}`, { iptables: binary, args: args.join(' '), error: describe(result) });
    }
    return false;
  };
  for (const j of jumps) {
    const comment = j.comment === undefined ? [] : ['-m', 'comment', '--comment', j.comment];
    const args = ['-t', j.table, '-D', j.from, ...(j.match ?? []), ...comment, '-j', j.to];
    // Duplicates (e.g. left by a crashed proxy) are removed too; bounded in case -D keeps "succeeding".
    for (let i = 0; i < MAX_DUPLICATES && (await run(args, 'removing a jump rule')); i++);
  }
  for (const c of chains) await run(['-t', c.table, '-F', c.chain], 'flushing a chain');
  for (const c of chains) await run(['-t', c.table, '-X', c.chain], 'deleting a chain');
  return encounteredError;
}
