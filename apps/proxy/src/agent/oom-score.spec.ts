import { RecordingLogger } from '@kube-proxy/core/testing';
import { REASON_FAILED_TO_APPLY_OOM_SCORE_ADJ } from './node-events.js';
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

  it('reports a failed write as a Node warning event, and a successful one not at all', async () => {
    const warnings: [string, string][] = [];
    const events = { warning: (reason: string, note: string) => void warnings.push([reason, note]) };
    await applyOomScoreAdj(-999, new RecordingLogger(), async () => undefined, events);
    expect(warnings).toEqual([]);
    await applyOomScoreAdj(
      -999,
      new RecordingLogger(),
      async () => {
        throw new Error('EACCES: permission denied');
      },
      events,
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.[0]).toBe(REASON_FAILED_TO_APPLY_OOM_SCORE_ADJ);
    expect(warnings[0]?.[1]).toContain(OOM_SCORE_ADJ_PATH);
  });
});
