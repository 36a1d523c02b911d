import { writeFile } from 'node:fs/promises';
import type { Logger } from '@kube-proxy/core';
import { noopNodeEventRecorder, REASON_FAILED_TO_APPLY_OOM_SCORE_ADJ, type NodeEventRecorder } from './node-events.js';

export const OOM_SCORE_ADJ_PATH = '/proc/self/oom_score_adj';

export type FileWriter = (path: string, data: string) => Promise<void>;

/**
 * Applies oomScoreAdj to this process, so the kernel kills workloads before the node's proxy.
 * Failing (no CAP_SYS_RESOURCE for a negative value, read-only /proc) is a warning, as upstream
 * only logs it too; here it is also a Warning event on the Node (reason FailedToApplyOOMScoreAdj, ours).
 */
export async function applyOomScoreAdj(
  value: number,
  logger: Logger,
  write: FileWriter = (p, d) => writeFile(p, d),
  events: NodeEventRecorder = noopNodeEventRecorder,
): Promise<void> {
  try {
    await write(OOM_SCORE_ADJ_PATH, String(value));
    logger.verbose('Applied oom_score_adj', { value });
  } catch (err) {
    logger.warn('Failed to apply oom_score_adj', { value, path: OOM_SCORE_ADJ_PATH, err: String(err) });
    events.warning(REASON_FAILED_TO_APPLY_OOM_SCORE_ADJ, `Cannot write ${value} to ${OOM_SCORE_ADJ_PATH}: ${String(err)}`);
  }
}
