import { nullLogger, systemClock } from '@kube-proxy/core';
import { FdBudget, localSocketOpener, newProxyCounters, type OpenProxySocket, type ProxySocketHandle } from '@kube-proxy/userspace-proxy';
import { eventually } from '@kube-proxy/userspace-proxy/testing';
import { context, RecordingIptables, service, slice } from '../testing/proxier-fixtures.js';
import { UserspaceProxier } from './userspace-proxier.js';

/**
 * Partial syncs (issue 24: a change costs the change): an endpoint change touches only its Service's
 * sockets and leaves the capture rules alone; a change of addresses or ports rewrites them. Either
 * way the result is what a full sync of the same state gives.
 */
describe('UserspaceProxier partial syncs', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function start() {
    const ctx = context();
    const counters = newProxyCounters();
    const iptables = new RecordingIptables();
    const open = localSocketOpener({ family: 'IPv4', listenIP: '127.0.0.1', udpIdleTimeoutMs: 250, counters, budget: new FdBudget(1000), clock: systemClock, logger: nullLogger });
    // Counts endpoint updates per proxy port, to see which sockets a sync touched.
    const updates = new Map<number, number>();
    const counting: OpenProxySocket = async (request) => {
      const handle = await open(request);
      const wrapped: ProxySocketHandle = {
        get port() {
          return handle.port;
        },
        get endpoints() {
          return handle.endpoints;
        },
        get affinitySeconds() {
          return handle.affinitySeconds;
        },
        update: (endpoints, affinity) => {
          updates.set(handle.port, (updates.get(handle.port) ?? 0) + 1);
          handle.update(endpoints, affinity);
        },
        close: () => handle.close(),
      };
      return wrapped;
    };
    const proxier = new UserspaceProxier({ family: 'IPv4', context: ctx, iptables, openSocket: counting, counters, clock: systemClock, logger: nullLogger });
    void proxier.syncLoop();
    cleanups.push(() => proxier.stop());
    return { proxier, iptables, updates };
  }

  async function twoServices() {
    const env = start();
    const { proxier } = env;
    proxier.onServiceAdd(service('web', '10.96.0.10', [{ name: 'http', port: 80 }]));
    proxier.onServiceAdd(service('api', '10.96.0.11', [{ name: 'http', port: 80 }]));
    proxier.onEndpointSliceAdd(slice('web', '1', 'http', 8080, [{ ip: '10.244.1.10' }]));
    proxier.onEndpointSliceAdd(slice('api', '1', 'http', 8080, [{ ip: '10.244.1.20' }]));
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await proxier.firstSync();
    return env;
  }

  const syncsAfter = async (proxier: UserspaceProxier, n: number) => expect(await eventually(() => proxier.stats.syncs >= n)).toBe(true);
  const endpointsOf = (proxier: UserspaceProxier, key: string) => proxier.sockets.get(key)!.internal.endpoints.map((e) => `${e.ip}:${e.port}`);

  /** A full sync of the same state: it must write what the partial syncs left, and change no socket. */
  async function expectFullSyncAgrees(proxier: UserspaceProxier, iptables: RecordingIptables): Promise<void> {
    const before = new Map([...proxier.sockets.keys()].map((k) => [k, { port: proxier.sockets.get(k)!.internal.port, endpoints: endpointsOf(proxier, k) }]));
    const payload = iptables.lastPayload;
    const syncs = proxier.stats.syncs;
    proxier.forceSync();
    await syncsAfter(proxier, syncs + 1);
    expect(proxier.stats.fullSyncs).toBeGreaterThan(1);
    expect(iptables.lastPayload).toBe(payload);
    expect(new Map([...proxier.sockets.keys()].map((k) => [k, { port: proxier.sockets.get(k)!.internal.port, endpoints: endpointsOf(proxier, k) }]))).toEqual(before);
  }

  it('follows an endpoint change on its own Service only, without rewriting the capture rules', async () => {
    const { proxier, iptables, updates } = await twoServices();
    const restores = iptables.payloads.length;
    const webPort = proxier.sockets.get('default/web:http')!.internal.port;
    const apiPort = proxier.sockets.get('default/api:http')!.internal.port;
    const apiUpdates = updates.get(apiPort) ?? 0;
    const webUpdates = updates.get(webPort) ?? 0;

    proxier.onEndpointSliceUpdate(slice('web', '1', 'http', 8080, [{ ip: '10.244.1.10' }]), slice('web', '1', 'http', 8080, [{ ip: '10.244.1.99' }]));
    await syncsAfter(proxier, 2);
    expect(proxier.stats.partialSyncs).toBe(1);
    expect(endpointsOf(proxier, 'default/web:http')).toEqual(['10.244.1.99:8080']);
    expect(iptables.payloads).toHaveLength(restores);
    expect(updates.get(webPort)).toBe(webUpdates + 1);
    expect(updates.get(apiPort) ?? 0).toBe(apiUpdates);
    await expectFullSyncAgrees(proxier, iptables);
  });

  it('rewrites the capture rules when a Service is added, moves its port or goes away', async () => {
    const { proxier, iptables } = await twoServices();
    let restores = iptables.payloads.length;
    proxier.onServiceAdd(service('db', '10.96.0.12', [{ name: 'sql', port: 5432 }]));
    await syncsAfter(proxier, 2);
    expect(iptables.payloads.length).toBe(++restores);
    expect(iptables.lastPayload).toContain('--dport 5432 -d 10.96.0.12/32');

    proxier.onServiceUpdate(service('api', '10.96.0.11', [{ name: 'http', port: 80 }]), service('api', '10.96.0.11', [{ name: 'http', port: 81 }]));
    await syncsAfter(proxier, 3);
    expect(iptables.payloads.length).toBe(++restores);
    expect(iptables.lastPayload).toContain('--dport 81 -d 10.96.0.11/32');
    expect(iptables.lastPayload).not.toContain('--dport 80 -d 10.96.0.11/32');

    proxier.onServiceDelete(service('web', '10.96.0.10', [{ name: 'http', port: 80 }]));
    await syncsAfter(proxier, 4);
    expect(iptables.payloads.length).toBe(++restores);
    expect(proxier.sockets.get('default/web:http')).toBeUndefined();
    expect(iptables.lastPayload).not.toContain('default/web:http');
    expect(proxier.stats.partialSyncs).toBe(3);
    await expectFullSyncAgrees(proxier, iptables);
  });
});
