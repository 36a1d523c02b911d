import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { ProxyMetrics } from '../observers/metrics/proxy-metrics.js';
import { nullLogger } from '../host/logger.js';
import { BoundedFrequencyRunner } from './bounded-frequency-runner.js';
import { FakeClock } from '../testing/fake-clock.js';
import { ProxierBase } from './proxier-base.js';

class TestProxier extends ProxierBase {
  syncs = 0;
  readonly cidrsSeen: Array<readonly string[]> = [];
  stopsSeen = 0;
  loopPrepared = false;
  readonly nodeEvents: string[] = [];
  protected readonly runner: BoundedFrequencyRunner;
  constructor(metrics?: ProxyMetrics, readonly clock = new FakeClock(), family: 'IPv4' | 'IPv6' = 'IPv4') {
    super({ mode: 'test', family, nodeName: 'node-1', logger: nullLogger, observers: { metrics } });
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
  protected override serviceCIDRsChanged(): void {
    this.cidrsSeen.push(this.serviceCIDRs);
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

  describe('onServiceCIDRsChanged', () => {
    const both = ['10.96.0.0/12', 'fd00:10:96::/112', '10.100.0.0/16', '::ffff:10.0.0.0/104'];

    it('keeps only its own family, in the order given, and starts empty', () => {
      const v4 = new TestProxier();
      const v6 = new TestProxier(undefined, new FakeClock(), 'IPv6');
      expect(v4.cidrsSeen).toEqual([]);
      v4.onServiceCIDRsChanged(both);
      v6.onServiceCIDRsChanged(both);
      expect(v4.cidrsSeen).toEqual([['10.96.0.0/12', '10.100.0.0/16']]);
      // Family by notation: an IPv4-mapped block written in IPv6 notation belongs to IPv6.
      expect(v6.cidrsSeen).toEqual([['fd00:10:96::/112', '::ffff:10.0.0.0/104']]);
    });

    it('calls the hook only when its own list actually changed', () => {
      const p = new TestProxier();
      p.onServiceCIDRsChanged([]);
      p.onServiceCIDRsChanged(['fd00::/112']);
      expect(p.cidrsSeen).toEqual([]);
      p.onServiceCIDRsChanged(['10.96.0.0/12']);
      p.onServiceCIDRsChanged(['10.96.0.0/12', 'fd00::/112']);
      p.onServiceCIDRsChanged(['10.96.0.0/12', '10.100.0.0/16']);
      p.onServiceCIDRsChanged(['10.100.0.0/16', '10.96.0.0/12']);
      p.onServiceCIDRsChanged([]);
      expect(p.cidrsSeen).toEqual([['10.96.0.0/12'], ['10.96.0.0/12', '10.100.0.0/16'], ['10.100.0.0/16', '10.96.0.0/12'], []]);
    });

    it('keeps a copy: the caller reusing its array does not change the stored list', () => {
      const p = new TestProxier();
      const list = ['10.96.0.0/12'];
      p.onServiceCIDRsChanged(list);
      list.push('10.100.0.0/16');
      expect(p.cidrsSeen).toEqual([['10.96.0.0/12']]);
    });
  });
});
