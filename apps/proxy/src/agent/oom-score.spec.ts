import { RecordingLogger } from '@kube-proxy/core';
import { applyOomScoreAdj, OOM_SCORE_ADJ_PATH } from './oom-score.js';

describe('applyOomScoreAdj', () => {
  it('writes the value to /proc/self/oom_score_adj', async () => {
    const writes: [string, string][] = [];
    await applyOomScoreAdj(-999, new RecordingLogger(), async (p, d) => void writes.push([p, d]));
    expect(writes).toEqual([[OOM_SCORE_ADJ_PATH, '-999']]);
  });

  it('only warns when the write fails', async () => {
    const logger = new RecordingLogger();
    await applyOomScoreAdj(-999, logger, async () => {
      throw new Error('EACCES: permission denied');
    });
    expect(logger.has('warn', 'Failed to apply oom_score_adj')).toBe(true);
  });
});
