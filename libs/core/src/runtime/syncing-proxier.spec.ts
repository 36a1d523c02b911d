import type { V1Service } from '@kubernetes/client-node';
import type { TextSink } from '../contracts/proxy-context.js';
import type { ProxyMetrics } from '../observers/metrics/proxy-metrics.js';
import { FakeClock } from '../testing/fake-clock.js';
import { RecordingLogger } from '../testing/host-fakes.js';
import { advanceSettling, settle } from '../testing/settle.js';
import { StringSink } from '../testing/test-context.js';
import { SyncingProxier } from './syncing-proxier.js';
import { newSyncStats, type SyncRequest, type SyncResult, type SyncStats } from './sync-types.js';

/** A backend whose datapath step answers what the test scripts, and records each request. */
class ScriptedProxier extends SyncingProxier {
  readonly stats: SyncStats = newSyncStats();
  readonly requests: SyncRequest[] = [];
  readonly outcomes: Array<SyncResult | Error> = [];
  failedHooks = 0;

  constructor(clock: FakeClock, logger: RecordingLogger, metrics?: Partial<ProxyMetrics>, dryRunSink?: TextSink, alwaysFull = false) {
    super({
      mode: 'scripted',
      family: 'IPv4',
      nodeName: 'node-1',
      logger,
      observers: metrics ? { metrics: metrics as ProxyMetrics } : {},
      clock,
      syncPeriodMs: 30_000,
      minSyncPeriodMs: 0,
      alwaysFull,
      ...(dryRunSink ? { dryRunSink } : {}),
    });
  }

  protected async syncOnce(request: SyncRequest): Promise<SyncResult> {
    this.requests.push(request);
    const next = this.outcomes.shift() ?? { outcome: 'synced' };
    if (next instanceof Error) throw next;
    return next;
  }

  protected override afterSync(succeeded: boolean): void {
    if (!succeeded) this.failedHooks++;
  }

  askForFullSync(): void {
    this.requestFullSync();
    this.sync();
  }
}

const svc = (name: string): V1Service => ({ metadata: { name, namespace: 'ns' }, spec: { clusterIP: '10.0.0.1', ports: [{ port: 80, protocol: 'TCP' }] } }) as V1Service;

function rig(options: { metrics?: Partial<ProxyMetrics>; sink?: TextSink; alwaysFull?: boolean } = {}) {
  const clock = new FakeClock();
  const logger = new RecordingLogger();
  const proxier = new ScriptedProxier(clock, logger, options.metrics, options.sink, options.alwaysFull);
  const loop = proxier.syncLoop();
  const start = async (): Promise<void> => {
    proxier.onServiceAdd(svc('a'));
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await settle();
  };
  const finish = async (): Promise<void> => {
    proxier.stop();
    await loop;
  };
  return { clock, logger, proxier, start, finish };
}

describe('SyncingProxier (the one sync engine)', () => {
  it('does not sync before both initial lists arrived, then syncs fully once and settles firstSync()', async () => {
    const r = rig();
    r.proxier.onServiceAdd(svc('a'));
    r.proxier.onServicesSynced();
    await settle();
    expect(r.proxier.requests).toHaveLength(0);
    r.proxier.onEndpointSlicesSynced();
    await r.proxier.firstSync();
    expect(r.proxier.requests.map((q) => q.full)).toEqual([true]);
    expect(r.proxier.stats).toMatchObject({ syncs: 1, fullSyncs: 1, partialSyncs: 0, failedSyncs: 0 });
    expect(r.proxier.requests[0]!.applied.services.updatedServices).toEqual(new Set(['ns/a']));
    await r.finish();
  });

  it('syncs partially after a success, fully after a failure, and retries a failure after syncPeriod', async () => {
    const r = rig();
    await r.start();
    r.proxier.outcomes.push({ outcome: 'failed' });
    r.proxier.onServiceAdd(svc('b'));
    await settle();
    expect(r.proxier.requests.map((q) => q.full)).toEqual([true, false]);
    expect(r.proxier.stats).toMatchObject({ syncs: 1, failedSyncs: 1 });
    expect(r.proxier.failedHooks).toBe(1);
    expect(r.logger.entries.some((e) => e.message === 'Sync failed' && e.meta?.['retryingTimeMs'] === 30_000)).toBe(true);
    await advanceSettling(r.clock, 29_000, 1000);
    expect(r.proxier.requests).toHaveLength(2);
    await advanceSettling(r.clock, 2000, 500);
    expect(r.proxier.requests.map((q) => q.full)).toEqual([true, false, true]);
    expect(r.proxier.stats).toMatchObject({ syncs: 2, fullSyncs: 2, failedSyncs: 1 });
    await r.finish();
  });

  it('an unexpected error fails the sync with one message naming the mode', async () => {
    const r = rig();
    r.proxier.outcomes.push(new Error('boom'));
    await r.start();
    expect(r.proxier.stats.failedSyncs).toBe(1);
    expect(r.logger.entries.find((e) => e.level === 'error')?.message).toBe('Failed to sync scripted rules');
    await r.finish();
  });

  it("'retry' runs the step again at once as a full sync within the same sync, at most 8 times", async () => {
    const r = rig();
    await r.start();
    for (let i = 0; i < 2; i++) r.proxier.outcomes.push({ outcome: 'retry' });
    r.proxier.onServiceAdd(svc('b'));
    await settle();
    expect(r.proxier.requests.slice(1).map((q) => [q.full, q.attempt])).toEqual([
      [false, 0],
      [true, 1],
      [true, 2],
    ]);
    expect(r.proxier.stats).toMatchObject({ syncs: 2, fullSyncs: 2, partialSyncs: 0, failedSyncs: 0 });
    for (let i = 0; i < 20; i++) r.proxier.outcomes.push({ outcome: 'retry' });
    r.proxier.onServiceAdd(svc('c'));
    await settle();
    expect(r.proxier.requests).toHaveLength(4 + 9);
    expect(r.proxier.stats.failedSyncs).toBe(1);
    await r.finish();
  });

  it('a full sync asked for during a sync is not cleared by its success', async () => {
    const r = rig();
    await r.start();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const step = r.proxier['syncOnce'].bind(r.proxier);
    r.proxier['syncOnce'] = async (q: SyncRequest): Promise<SyncResult> => {
      if (q.full === false && r.proxier.requests.length === 1) await held;
      return step(q);
    };
    r.proxier.onServiceAdd(svc('b'));
    await settle();
    r.proxier.askForFullSync();
    release();
    await advanceSettling(r.clock, 1000, 100);
    expect(r.proxier.requests.map((q) => q.full)).toEqual([true, false, true]);
    await r.finish();
  });

  it('observes the duration by kind, publishes the pending gauges and the success report', async () => {
    const seen: string[] = [];
    const metrics: Partial<ProxyMetrics> = {
      syncQueued: () => undefined,
      serviceChangeSeen: () => undefined,
      serviceChangesPending: (n) => seen.push(`pending services ${n}`),
      endpointChangesPending: (n) => seen.push(`pending endpoints ${n}`),
      syncDuration: (_f, _s, kind) => seen.push(`duration ${kind}`),
      noLocalEndpoints: (_f, c) => seen.push(`no local ${c.internal}/${c.external}`),
      syncSucceeded: () => seen.push('succeeded'),
      networkProgrammingLatency: () => undefined,
    };
    const r = rig({ metrics });
    r.proxier.outcomes.push({ outcome: 'synced', noLocalEndpoints: { internal: 1, external: 2 } });
    await r.start();
    // The Service event counts as pending (1) until the sync drains it (0), then upstream's report order.
    expect(seen).toEqual(['pending services 1', 'pending services 0', 'pending endpoints 0', 'no local 1/2', 'succeeded', 'duration full']);
    await r.finish();
  });

  it('writes the dry-run block after the engine header, or the backend header it gives', async () => {
    const sink = new StringSink();
    const r = rig({ sink });
    r.proxier.outcomes.push({ outcome: 'synced', dryRunOutput: ['rule 1\n', 'rule 2\n'] });
    await r.start();
    expect(sink.text).toBe('# sync 1 full 2000-01-01T00:00:00.000Z\nrule 1\nrule 2\n');
    r.proxier.outcomes.push({ outcome: 'synced', dryRunOutput: ['x\n'], dryRunHeader: '# mine\n' });
    r.proxier.onServiceAdd(svc('b'));
    await settle();
    expect(sink.text.endsWith('# mine\nx\n')).toBe(true);
    await r.finish();
  });

  it('alwaysFull: every sync is a full one', async () => {
    const r = rig({ alwaysFull: true });
    await r.start();
    r.proxier.onServiceAdd(svc('b'));
    await settle();
    expect(r.proxier.requests.map((q) => q.full)).toEqual([true, true]);
    await r.finish();
  });

  it('ends every sync with the complete line, carrying its wall time and the CPU time of our own compute', async () => {
    const r = rig();
    r.proxier.outcomes.push({ outcome: 'synced' });
    await r.start();
    await r.proxier.firstSync();
    const done = r.logger.entries.filter((e) => e.message === 'SyncProxyRules complete');
    expect(done).toHaveLength(1);
    const meta = done[0]!.meta as { elapsedMs: number; cpuMs: number };
    expect(meta.elapsedMs).toBeGreaterThanOrEqual(0);
    // Real CPU time of this process over the sync: a small non-negative number, in tenths of a millisecond.
    expect(meta.cpuMs).toBeGreaterThanOrEqual(0);
    expect(meta.cpuMs).toBeLessThan(5_000);
    await r.finish();
  });
});
