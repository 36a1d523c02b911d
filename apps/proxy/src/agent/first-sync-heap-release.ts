import type { Logger } from '@kube-proxy/core';

/** What the release needs of the process (injected so the spec runs without --expose-gc). */
export interface HeapReleaseHost {
  /** A full, compacting garbage collection: `globalThis.gc` when node runs with --expose-gc. */
  readonly gc: (() => void) | undefined;
  readonly rssBytes: () => number;
  /** Waits a little (the sync that resolved firstSync still holds its payload until it has returned). */
  readonly settle: () => Promise<void>;
}

/** Long enough for the first sync, and the other family's, to return and drop what they rendered. */
const SETTLE_MS = 2_000;

export const processHeapReleaseHost = (): HeapReleaseHost => ({
  gc: (globalThis as { gc?: () => void }).gc,
  rssBytes: () => process.memoryUsage.rss(),
  settle: () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS).unref()),
});

/**
 * After the first sync, one full garbage collection. The first sync is the process's peak: it decodes
 * every object, renders every rule and holds the payload, and V8 keeps the old-space pages it grew into
 * until its memory reducer gets round to them, tens of seconds to minutes later (measured at 10k × 5:
 * nftables 287 MB 20 s after the first sync, 204 MB once the reducer ran). A node's steady RSS should not
 * depend on that timer, so the garbage is collected and the pages returned once, two seconds after, for
 * ~0.1–0.3 s of one core. Without --expose-gc (node started some other way) it does nothing.
 */
export async function releaseFirstSyncPeak(firstSync: Promise<void>, logger: Logger, host: HeapReleaseHost = processHeapReleaseHost()): Promise<void> {
  try {
    await firstSync;
  } catch {
    return; // no first sync (a stopped provider): nothing was built up
  }
  if (!host.gc) return;
  await host.settle();
  const before = host.rssBytes();
  const started = Date.now();
  host.gc();
  const mb = (bytes: number) => Math.round(bytes / 1048576);
  logger.verbose('Released the first sync peak', { rssMBBefore: mb(before), rssMBAfter: mb(host.rssBytes()), gcMs: Date.now() - started });
}
