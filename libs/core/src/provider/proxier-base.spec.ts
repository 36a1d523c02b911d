import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { ProxyMetrics } from '../metrics/proxy-metrics.js';
import { nullLogger } from '../ports/logger.js';
import { BoundedFrequencyRunner } from '../runner/bounded-frequency-runner.js';
import { FakeClock } from '../runner/fake-clock.js';
import { ProxierBase } from './proxier-base.js';

class TestProxier extends ProxierBase {
  syncs = 0;
  stopsSeen = 0;
  loopPrepared = false;
  readonly nodeEvents: string[] = [];
  protected readonly runner: BoundedFrequencyRunner;
  constructor(metrics?: ProxyMetrics, readonly clock = new FakeClock()) {
    super({ mode: 'test', family: 'IPv4', nodeName: 'node-1', logger: nullLogger, observers: { metrics } });
    this.runner = new BoundedFrequencyRunner({
      name: 'test',
      fn: async () => {
        this.syncs++;
        if (!this.first.settled) this.first.resolve();
      },
      minIntervalMs: 0,
      maxIntervalMs: 60_000,
      burstRuns: 2,
      clock,
      logger: nullLogger,
    });
  }
  protected override async beforeLoop(): Promise<void> {
    this.loopPrepared = true;
  }
  protected onStop(): void {
    this.stopsSeen++;
  }
  protected override nodeEvent(node: V1Node, deleted: boolean): void {
    // ProxyState must not have seen the event yet.
    this.nodeEvents.push(`${node.metadata?.name}:${deleted}:${this.state.nodeLabels['zone'] ?? '-'}`);
  }
}

const svc = { metadata: { name: 's', namespace: 'ns' }, spec: { clusterIP: '10.0.0.1', ports: [{ port: 80, protocol: 'TCP' }] } } as V1Service;
const slice = (addressType: string) =>
  ({ metadata: { name: `s-${addressType}`, namespace: 'ns', labels: { 'kubernetes.io/service-name': 's' } }, addressType, endpoints: [], ports: [] }) as V1EndpointSlice;
const node = (zone: string) => ({ metadata: { name: 'node-1', labels: { zone } } }) as V1Node;

describe('ProxierBase', () => {
  it('feeds ProxyState and syncs only once both initial lists arrived; first sync settles firstSync()', async () => {
    const p = new TestProxier();
    const loop = p.syncLoop();
    p.onServiceAdd(svc);
    p.onServicesSynced();
    await new Promise((r) => setImmediate(r));
    expect(p.loopPrepared).toBe(true);
    expect(p.syncs).toBe(0);
    p.onEndpointSlicesSynced();
    await p.firstSync();
    expect(p.syncs).toBe(1);
    expect(p.state.isInitialized()).toBe(true);
    p.stop();
    await loop;
  });

  it('stop(): stops the runner once, lets the backend release, and rejects a pending firstSync naming the mode', async () => {
    const p = new TestProxier();
    const loop = p.syncLoop();
    p.stop();
    p.stop();
    expect(p.stopsSeen).toBe(1);
    await expect(p.firstSync()).rejects.toThrow('test proxier (IPv4) stopped before the first sync');
    await loop;
    p.sync();
    expect(p.syncs).toBe(0);
  });

  it('counts Service changes and only this family\'s EndpointSlice changes', () => {
    const seen: string[] = [];
    const metrics = {
      serviceChangeSeen: () => seen.push('svc'),
      serviceChangesPending: (n: number) => seen.push(`svc-pending=${n}`),
      endpointChangeSeen: () => seen.push('eps'),
      endpointChangesPending: (n: number) => seen.push(`eps-pending=${n}`),
    } as unknown as ProxyMetrics;
    const p = new TestProxier(metrics);
    p.onServiceAdd(svc);
    p.onEndpointSliceAdd(slice('IPv6'));
    p.onEndpointSliceAdd(slice('IPv4'));
    expect(seen).toEqual(['svc', 'svc-pending=1', 'eps', 'eps-pending=1']);
  });

  it('lets the backend see its Node before ProxyState does', () => {
    const p = new TestProxier();
    p.onNodeAdd(node('a'));
    p.onNodeUpdate(node('a'), node('b'));
    p.onNodeDelete(node('b'));
    expect(p.nodeEvents).toEqual(['node-1:false:-', 'node-1:false:a', 'node-1:true:b']);
  });
});
