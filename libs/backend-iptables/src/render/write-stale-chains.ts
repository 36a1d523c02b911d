/**
 * Deletion of per-service chains no longer in use: every KUBE-SVC/SVL/EXT/FW/SEP chain the kernel
 * holds that this sync did not render or keep. Upstream walks a Go set (random order); we write
 * them sorted by name so the payload is deterministic.
 */
import { isServiceChainName, makeChainLine } from './constants.js';
import type { LineSink } from './line-buffer.js';

/** Writes a flushing chain line and a `-X` per stale chain; returns how many were deleted. */
export function writeStaleChainDeletions(existing: ReadonlySet<string>, active: ReadonlySet<string>, natChains: LineSink, natRules: LineSink): number {
  const stale: string[] = [];
  for (const chain of existing) {
    if (!active.has(chain) && isServiceChainName(chain)) stale.push(chain);
  }
  stale.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const chain of stale) {
    // A chain line flushes the chain; then it can be deleted.
    natChains.write(makeChainLine(chain));
    natRules.write(`-X ${chain}`);
  }
  return stale.length;
}
