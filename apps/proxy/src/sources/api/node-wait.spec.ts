import type { V1Node } from '@kubernetes/client-node';
import { nullLogger, type Logger } from '@kube-proxy/core';
import { nodeNotReadyReason, waitForNode } from './node-wait.js';

const node = (extra: { ips?: string[]; podCIDRs?: string[]; podCIDR?: string } = {}): V1Node => ({
  metadata: { name: 'n1' },
  spec: { ...(extra.podCIDRs ? { podCIDRs: extra.podCIDRs } : {}), ...(extra.podCIDR ? { podCIDR: extra.podCIDR } : {}) },
  status: { addresses: (extra.ips ?? []).map((address) => ({ type: 'InternalIP', address })) },
});

describe('nodeNotReadyReason', () => {
  it('needs the Node, an address, and pod CIDRs only when asked', () => {
    expect(nodeNotReadyReason(undefined, 'n1', false)).toBe('node "n1" not found');
    expect(nodeNotReadyReason(node(), 'n1', false)).toMatch(/no InternalIP or ExternalIP/);
    expect(nodeNotReadyReason(node({ ips: ['10.0.0.1'] }), 'n1', false)).toBeUndefined();
    expect(nodeNotReadyReason(node({ ips: ['10.0.0.1'] }), 'n1', true)).toMatch(/does not have any PodCIDR/);
    expect(nodeNotReadyReason(node({ ips: ['10.0.0.1'], podCIDRs: ['10.244.1.0/24'] }), 'n1', true)).toBeUndefined();
    expect(nodeNotReadyReason(node({ ips: ['10.0.0.1'], podCIDR: '10.244.1.0/24' }), 'n1', true)).toBeUndefined();
  });
});

describe('waitForNode', () => {
  const infos: string[] = [];
  const logger: Logger = { ...nullLogger, info: (m) => void infos.push(m), child: () => logger };
  beforeEach(() => {
    infos.length = 0;
  });

  it('returns as soon as the Node becomes ready, logging the wait', async () => {
    let current: V1Node | undefined;
    setTimeout(() => (current = node({ ips: ['10.0.0.1'], podCIDRs: ['10.244.0.0/24'] })), 60);
    const r = await waitForNode(() => current, { nodeName: 'n1', needPodCIDR: true, timeoutMs: 2000, pollIntervalMs: 10, logger });
    expect(r.problem).toBeUndefined();
    expect(r.node?.metadata?.name).toBe('n1');
    expect(infos).toEqual(['Waiting for the Node object', 'Node is ready']);
  });

  it('gives up at the deadline with the reason', async () => {
    const t0 = Date.now();
    const r = await waitForNode(() => node({ ips: ['10.0.0.1'] }), { nodeName: 'n1', needPodCIDR: true, timeoutMs: 100, pollIntervalMs: 20, logger });
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(r.problem).toMatch(/PodCIDR/);
    expect(r.node).toBeDefined();
  });
});
