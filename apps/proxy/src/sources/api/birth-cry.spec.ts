import { nullLogger, type Logger } from '@kube-proxy/core';
import { TestApiServer } from '@kube-proxy/testing-apiserver';
import type { NodeEventRecorder } from '../../agent/node-events.js';
import { ApiNodeEventRecorder, microTime, postBirthCry, startingEvent } from './birth-cry.js';
import { createKubeClient } from './kube-client.js';

describe('birth cry', () => {
  it('builds upstream\'s Starting event for the Node', () => {
    const now = new Date('2026-01-02T03:04:05.678Z');
    expect(startingEvent('node-1', now, 'host-a')).toEqual({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `node-1.${(BigInt(now.getTime()) * 1_000_000n).toString(16)}`, namespace: 'default' },
      eventTime: '2026-01-02T03:04:05.678000Z',
      reportingController: 'kube-proxy',
      reportingInstance: 'kube-proxy-host-a',
      action: 'StartKubeProxy',
      reason: 'Starting',
      type: 'Normal',
      regarding: { kind: 'Node', name: 'node-1', uid: 'node-1' },
    });
    expect(microTime(new Date('2026-01-02T03:04:05Z'))).toBe('2026-01-02T03:04:05.000000Z');
  });

  it('posts it, and only logs a failure', async () => {
    const server = await TestApiServer.start();
    const warnings: string[] = [];
    const logger: Logger = { ...nullLogger, warn: (m) => void warnings.push(m), child: () => logger };
    try {
      const client = createKubeClient({ master: server.url, clientConnection: { qps: -1, burst: 0, contentType: '', acceptContentTypes: '' }, logger });
      expect(await postBirthCry(client.api, 'node-1', logger)).toBe(true);
      expect(server.events()).toHaveLength(1);
      expect(server.events()[0]).toMatchObject({ reason: 'Starting', action: 'StartKubeProxy', regarding: { kind: 'Node', name: 'node-1' } });
      expect(server.requests.at(-1)?.path).toBe('/apis/events.k8s.io/v1/namespaces/default/events');

      server.failRequests(1, 500);
      expect(await postBirthCry(client.api, 'node-1', logger)).toBe(false);
      expect(warnings).toEqual(['Could not post the Starting event; continuing']);
    } finally {
      await server.close();
    }
  });
});

describe('ApiNodeEventRecorder', () => {
  it('posts a Warning event regarding the Node, without waiting; a failing POST is logged, not thrown', async () => {
    const server = await TestApiServer.start();
    const warnings: string[] = [];
    const logger: Logger = { ...nullLogger, warn: (m) => void warnings.push(m), child: () => logger };
    try {
      const client = createKubeClient({ master: server.url, clientConnection: { qps: -1, burst: 0, contentType: '', acceptContentTypes: '' }, logger });
      const now = new Date('2026-01-02T03:04:05.678Z');
      const recorder = new ApiNodeEventRecorder({ api: client.api, nodeName: 'node-1', logger, now: () => now, hostname: 'host-a' });
      const asAgentSees: NodeEventRecorder = recorder;

      expect(asAgentSees.warning('readOnlySysFS', 'Cannot set sysctl net/netfilter/nf_conntrack_max to 131072')).toBeUndefined();
      // Same millisecond: still a distinct event name.
      asAgentSees.warning('FailedToSetConntrack', 'Cannot set sysctl net/netfilter/nf_conntrack_tcp_timeout_established to 86400');
      await recorder.settled();
      expect(server.events()).toHaveLength(2);
      // Posted concurrently: the server may have received them in either order.
      expect(server.events().find((e) => (e as { reason?: string }).reason === 'readOnlySysFS')).toMatchObject({
        type: 'Warning',
        reason: 'readOnlySysFS',
        action: 'StartKubeProxy',
        reportingController: 'kube-proxy',
        reportingInstance: 'kube-proxy-host-a',
        note: 'Cannot set sysctl net/netfilter/nf_conntrack_max to 131072',
        regarding: { kind: 'Node', name: 'node-1', uid: 'node-1' },
      });
      const names = server.events().map((e) => (e as { metadata: { name: string } }).metadata.name);
      expect(new Set(names).size).toBe(2);
      expect(warnings).toEqual([]);

      server.failRequests(1, 500);
      expect(() => recorder.warning('FailedToApplyOOMScoreAdj', 'Cannot write -999 to /proc/self/oom_score_adj')).not.toThrow();
      await recorder.settled();
      expect(server.events()).toHaveLength(2);
      expect(warnings).toEqual(['Could not post the FailedToApplyOOMScoreAdj warning event; continuing']);
    } finally {
      await server.close();
    }
  });
});
