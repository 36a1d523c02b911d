import { RecordingLogger } from '@kube-proxy/core/testing';
import { releaseFirstSyncPeak } from './first-sync-heap-release.js';

describe('releaseFirstSyncPeak', () => {
  it('collects once after the first sync and logs the RSS before and after', async () => {
    let rss = 300 * 1048576;
    let collections = 0;
    const logger = new RecordingLogger();
    let settle!: () => void;
    const firstSync = new Promise<void>((resolve) => (settle = resolve));
    const done = releaseFirstSyncPeak(firstSync, logger, { gc: () => { collections++; rss = 200 * 1048576; }, rssBytes: () => rss, settle: () => Promise.resolve() });
    await Promise.resolve();
    expect(collections).toBe(0);
    settle();
    await done;
    expect(collections).toBe(1);
    const line = logger.entries.find((e) => e.message === 'Released the first sync peak');
    expect(line?.meta).toMatchObject({ rssMBBefore: 300, rssMBAfter: 200 });
  });

  it('does nothing without a first sync, or without an exposed gc', async () => {
    const logger = new RecordingLogger();
    let collections = 0;
    await releaseFirstSyncPeak(Promise.reject(new Error('stopped')), logger, { gc: () => collections++, rssBytes: () => 0, settle: () => Promise.resolve() });
    await releaseFirstSyncPeak(Promise.resolve(), logger, { gc: undefined, rssBytes: () => 0, settle: () => Promise.resolve() });
    expect(collections).toBe(0);
    expect(logger.entries).toHaveLength(0);
  });
});
