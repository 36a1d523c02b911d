import { DualStackProvider, ProxierHealthTracker, type IPFamily, type Provider } from '@kube-proxy/core';
import { FakeClock, RecordingLogger } from '@kube-proxy/core/testing';
import { KUBE_PROXY_READY, type NodeConditionJson } from './kube-proxy-ready-condition.js';
import { NodeReadinessReporter } from './node-readiness-reporter.js';
import type { NodeStatusClient } from './node-status-client.js';

const BOUND_MS = 60_000; // 2 × the default 30 s syncPeriod
const T0 = Date.UTC(2026, 11, 6, 17, 0, 0);

/** A NodeStatusClient recording each PATCH; `failNext` makes the next n writes fail. */
class RecordingClient implements NodeStatusClient {
  readonly patches: NodeConditionJson[][] = [];
  existing: NodeConditionJson | undefined;
  failNext = 0;
  gets = 0;

  async getCondition(_node: string, type: string): Promise<NodeConditionJson | undefined> {
    this.gets++;
    return this.existing?.type === type ? this.existing : undefined;
  }

  async patchConditions(node: string, conditions: readonly NodeConditionJson[]): Promise<void> {
    if (node !== 'node-1') throw new Error(`unexpected node ${node}`);
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('HTTP 503 ServiceUnavailable');
    }
    this.patches.push([...conditions]);
  }

  last(): NodeConditionJson {
    const p = this.patches.at(-1);
    if (!p) throw new Error('no patch yet');
    return p[0]!;
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets the reporter's promise chains (first sync, GET, PATCH) settle. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

function rig(families: IPFamily[] = ['IPv4', 'IPv6'], opts: { heartbeatIntervalMs?: number } = {}) {
  const clock = new FakeClock(T0);
  const health = new ProxierHealthTracker(clock, BOUND_MS);
  const client = new RecordingClient();
  const logger = new RecordingLogger();
  const reporter = new NodeReadinessReporter({
    nodeName: 'node-1',
    mode: 'nftables',
    families,
    checker: health,
    healthTimeoutMs: BOUND_MS,
    client,
    clock,
    logger,
    checkIntervalMs: 1000,
    ...opts,
  });
  const first = deferred();
  // The sync loops start (upstream: a started loop counts as updated) before any sync succeeds.
  for (const f of families) health.updated(f);
  reporter.start(first.promise);
  /** Advances the fake time second by second, letting each tick's write settle. */
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 1000) {
      clock.advance(Math.min(1000, ms - t));
      await settle();
    }
  };
  return { clock, health, client, logger, reporter, first, advance };
}

/** A single-family provider whose first sync the test completes (only firstSync is used). */
function familyProvider(): { provider: Provider; synced: () => void } {
  const d = deferred();
  const provider = { firstSync: () => d.promise } as unknown as Provider;
  return { provider, synced: d.resolve };
}

describe('NodeReadinessReporter', () => {
  it("waits for the dual-stack provider's first sync of both families", async () => {
    const clock = new FakeClock(T0);
    const health = new ProxierHealthTracker(clock, BOUND_MS);
    const client = new RecordingClient();
    const v4 = familyProvider();
    const v6 = familyProvider();
    const reporter = new NodeReadinessReporter({
      nodeName: 'node-1',
      mode: 'iptables',
      families: ['IPv4', 'IPv6'],
      checker: health,
      healthTimeoutMs: BOUND_MS,
      client,
      clock,
      logger: new RecordingLogger(),
    });
    reporter.start(new DualStackProvider(v4.provider, v6.provider).firstSync());
    health.updated('IPv4');
    v4.synced();
    await settle();
    clock.advance(5000);
    await settle();
    expect(client.patches).toHaveLength(0); // IPv6 has not synced yet
    health.updated('IPv6');
    v6.synced();
    await settle();
    expect(client.patches).toHaveLength(1);
    expect(client.last()).toMatchObject({ status: 'True', message: 'kube-proxy (iptables mode) has programmed the Service rules of IPv4 and IPv6; ready since 2026-12-06T17:00:05Z' });
    await reporter.stop();
  });

  it('writes nothing before the first full sync of every family, then KubeProxyReady=True naming the mode and the time', async () => {
    const r = rig();
    await r.advance(5000);
    expect(r.client.patches).toHaveLength(0);

    r.health.updated('IPv4');
    r.health.updated('IPv6');
    r.first.resolve(); // the dual-stack provider's firstSync: both families synced
    await settle();
    expect(r.client.patches).toHaveLength(1);
    const c = r.client.last();
    expect(c).toEqual({
      type: KUBE_PROXY_READY,
      status: 'True',
      reason: 'RulesProgrammed',
      message: 'kube-proxy (nftables mode) has programmed the Service rules of IPv4 and IPv6; ready since 2026-12-06T17:00:05Z',
      lastHeartbeatTime: '2026-12-06T17:00:05Z',
      lastTransitionTime: '2026-12-06T17:00:05Z',
    });
    expect(r.logger.has('info', 'Set the Node condition KubeProxyReady=True')).toBe(true);
    await r.reporter.stop();
  });

  it('does not patch again while nothing changes (until the heartbeat)', async () => {
    const r = rig(['IPv4'], { heartbeatIntervalMs: 300_000 });
    r.first.resolve();
    await settle();
    expect(r.client.patches).toHaveLength(1);
    // Successful syncs and queued changes that are programmed in time change nothing.
    for (let i = 0; i < 10; i++) {
      r.health.queuedUpdate('IPv4');
      await r.advance(5000);
      r.health.updated('IPv4');
    }
    expect(r.client.patches).toHaveLength(1);
    // The heartbeat: the same condition, a new lastHeartbeatTime, the transition time kept.
    await r.advance(300_000);
    expect(r.client.patches).toHaveLength(2);
    const hb = r.client.last();
    expect(hb.status).toBe('True');
    expect(hb.lastTransitionTime).toBe('2026-12-06T17:00:00Z');
    expect(hb.lastHeartbeatTime).toBe('2026-12-06T17:05:00Z');
    expect(hb.message).toBe(r.client.patches[0]![0]!.message);
    await r.reporter.stop();
  });

  it('goes False (SyncFailing) once a change stays unprogrammed for the healthz bound, and True again after recovery', async () => {
    const r = rig(['IPv4', 'IPv6']);
    r.first.resolve();
    await settle();
    expect(r.client.last().status).toBe('True');

    // IPv6 syncs keep failing from here: its change is queued and never programmed.
    r.health.queuedUpdate('IPv6');
    await r.advance(BOUND_MS - 1000);
    expect(r.client.patches).toHaveLength(1); // 59 s late: still within the bound (/healthz says 200)
    expect(r.health.isHealthy()).toBe(true);
    await r.advance(1000);
    expect(r.health.isHealthy()).toBe(false); // the state /healthz answers 503 from
    expect(r.client.patches).toHaveLength(2);
    const down = r.client.last();
    expect(down).toMatchObject({ type: KUBE_PROXY_READY, status: 'False', reason: 'SyncFailing', lastTransitionTime: '2026-12-06T17:01:00Z' });
    expect(down.message).toBe(
      'kube-proxy (nftables mode) has failed to program IPv6 (last successful sync 2026-12-06T17:00:00Z) for longer than the healthz bound of 60s; not ready since 2026-12-06T17:01:00Z',
    );

    // Still failing: no further writes.
    await r.advance(30_000);
    expect(r.client.patches).toHaveLength(2);

    // A sync succeeds: True again, with a new transition time.
    r.health.updated('IPv6');
    await r.advance(1000);
    expect(r.client.patches).toHaveLength(3);
    expect(r.client.last()).toMatchObject({ status: 'True', reason: 'RulesProgrammed', lastTransitionTime: '2026-12-06T17:01:31Z' });
    await r.reporter.stop();
  });

  it('retries a failed write with backoff, logging it, without throwing', async () => {
    const r = rig(['IPv4']);
    r.client.failNext = 3;
    r.first.resolve();
    await settle();
    expect(r.client.patches).toHaveLength(0);
    expect(r.logger.has('warn', 'Could not set the Node condition KubeProxyReady; retrying')).toBe(true);
    // Retries after 1 s, 2 s, 4 s: the 4th attempt (7 s after the first) succeeds.
    await r.advance(6000);
    expect(r.client.patches).toHaveLength(0);
    await r.advance(1000);
    expect(r.client.patches).toHaveLength(1);
    expect(r.client.last().status).toBe('True');
    expect(r.logger.entries.filter((e) => e.level === 'warn')).toHaveLength(3);
    expect(r.logger.entries.find((e) => e.level === 'warn')?.meta).toMatchObject({ retryInMs: 1000, err: 'HTTP 503 ServiceUnavailable' });
    // The transition time is when the proxy became ready, not when the write finally went through.
    expect(r.client.last().lastTransitionTime).toBe('2026-12-06T17:00:00Z');
    await r.reporter.stop();
  });

  it("keeps the Node's lastTransitionTime from a previous run when the status is the same", async () => {
    const r = rig(['IPv4']);
    r.client.existing = {
      type: KUBE_PROXY_READY,
      status: 'True',
      reason: 'RulesProgrammed',
      message: 'kube-proxy (iptables mode) …',
      lastHeartbeatTime: '2026-12-06T16:55:00Z',
      lastTransitionTime: '2026-12-01T08:00:00Z',
    };
    r.first.resolve();
    await settle();
    expect(r.client.gets).toBe(1);
    expect(r.client.last()).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-12-01T08:00:00Z',
      lastHeartbeatTime: '2026-12-06T17:00:00Z',
      message: 'kube-proxy (nftables mode) has programmed the Service rules of IPv4; ready since 2026-12-01T08:00:00Z',
    });
    await r.reporter.stop();
  });

  it('writes nothing when the run ends before the first sync, and nothing after stop()', async () => {
    const r = rig(['IPv4']);
    await r.reporter.stop();
    r.first.resolve();
    await r.advance(5000);
    expect(r.client.patches).toHaveLength(0);
    expect(r.clock.pendingTimers()).toBe(0);
  });
});
