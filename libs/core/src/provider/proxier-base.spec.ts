import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { ProxyMetrics } from '../metrics/proxy-metrics.js';
import { nullLogger } from '../ports/logger.js';
import { ProxierBase } from './proxier-base.js';

class TestProxier extends ProxierBase {
  syncs = 0;
  readonly nodeEvents: string[] = [];
  constructor(metrics?: ProxyMetrics) {
    super({ family: 'IPv4', nodeName: 'node-1', logger: nullLogger, observers: { metrics } });
  }
  sync(): void {
    this.syncs++;
  }
  syncLoop(): Promise<void> {
    return Promise.resolve();
  }
  stop(): void {
    // nothing to stop
  }
  firstSync(): Promise<void> {
    return Promise.resolve();
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
  it('feeds ProxyState and asks for a sync only once both initial lists arrived', () => {
    const p = new TestProxier();
    p.onServiceAdd(svc);
    p.onServicesSynced();
    expect(p.syncs).toBe(0);
    p.onEndpointSlicesSynced();
    expect(p.syncs).toBeGreaterThan(0);
    expect(p.state.isInitialized()).toBe(true);
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
