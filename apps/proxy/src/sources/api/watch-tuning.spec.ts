import { watchTuningFromEnv } from './watch-tuning.js';

describe('watchTuningFromEnv', () => {
  it('leaves the defaults alone when nothing (or nonsense) is set', () => {
    expect(watchTuningFromEnv({})).toEqual({});
    expect(watchTuningFromEnv({ KUBE_PROXY_WATCH_TIMEOUT_SECONDS: 'soon', KUBE_PROXY_WATCH_STALL_GRACE_SECONDS: '-1' })).toEqual({});
  });

  it('turns the two variables into a fixed watch timeout (whole seconds) and a stall grace in ms', () => {
    const t = watchTuningFromEnv({ KUBE_PROXY_WATCH_TIMEOUT_SECONDS: '10', KUBE_PROXY_WATCH_STALL_GRACE_SECONDS: '2.5' });
    expect(t.watchTimeoutSeconds?.()).toBe(10);
    expect(t.watchStallGraceMs).toBe(2500);
  });
});
