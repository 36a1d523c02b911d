import { KUBE_PROXY_READY, kubeProxyReadyCondition, metaTime } from './kube-proxy-ready-condition.js';
import { apiNodeStatusClient } from './node-status-client.js';

interface Call {
  method: string;
  path: string;
  opts: { body?: unknown; contentType?: string };
}

function fakeApi(reply: unknown = {}) {
  const calls: Call[] = [];
  return {
    calls,
    api: {
      request: async <T>(method: string, path: string, opts: Call['opts'] = {}): Promise<T> => {
        calls.push({ method, path, opts });
        return reply as T;
      },
    },
  };
}

describe('apiNodeStatusClient', () => {
  const condition = kubeProxyReadyCondition({
    state: { ready: true, failing: [] },
    message: 'kube-proxy (iptables mode) has programmed the Service rules of IPv4; ready since 2026-12-06T17:00:00Z',
    transitionAt: Date.UTC(2026, 11, 6, 17, 0, 0),
    heartbeatAt: Date.UTC(2026, 11, 6, 17, 0, 0, 900),
  });

  it('PATCHes the status subresource with a strategic merge patch holding only its conditions', async () => {
    const f = fakeApi();
    await apiNodeStatusClient(f.api).patchConditions('node-1', [condition]);
    expect(f.calls).toEqual([
      {
        method: 'PATCH',
        path: '/api/v1/nodes/node-1/status',
        opts: { body: { status: { conditions: [condition] } }, contentType: 'application/strategic-merge-patch+json' },
      },
    ]);
    // metav1.Time: whole seconds, UTC.
    expect(condition.lastHeartbeatTime).toBe('2026-12-06T17:00:00Z');
  });

  it('reads one condition from a GET of the Node, and none when the Node has no such condition', async () => {
    const other = { type: 'Ready', status: 'True', reason: 'KubeletReady', message: '', lastHeartbeatTime: metaTime(0), lastTransitionTime: metaTime(0) };
    const f = fakeApi({ status: { conditions: [other, condition] } });
    expect(await apiNodeStatusClient(f.api).getCondition('node.with.dots', KUBE_PROXY_READY)).toEqual(condition);
    expect(f.calls[0]).toMatchObject({ method: 'GET', path: '/api/v1/nodes/node.with.dots' });
    expect(await apiNodeStatusClient(fakeApi({ status: {} }).api).getCondition('node-1', KUBE_PROXY_READY)).toBeUndefined();
  });
});
