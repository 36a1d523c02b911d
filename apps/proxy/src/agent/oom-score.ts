import { writeFile } from 'node:fs/promises';
import type { Logger } from '@kube-proxy/core';

export const OOM_SCORE_ADJ_PATH = '/proc/self/oom_score_adj';

export type FileWriter = (path: string, data: string) => Promise<void>;

/**
 * Applies oomScoreAdj to this process, so the kernel kills workloads before the node's proxy.
 * Failing (no CAP_SYS_RESOURCE for a negative value, read-only /proc) is a warning, as upstream
 * only logs it too.
 */
export async function applyOomScoreAdj(value: number, logger: Logger, write: FileWriter = (p, d) => writeFile(p, d)): Promise<void> {
  try {
    await write(OOM_SCORE_ADJ_PATH, String(value));
    logger.verbose('Applied oom_score_adj', { value });
  } catch (err) {
    logger.warn('Failed to apply oom_score_adj', { value, path: OOM_SCORE_ADJ_PATH, err: String(err) });
  }
}
