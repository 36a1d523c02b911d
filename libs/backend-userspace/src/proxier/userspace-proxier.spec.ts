import { nullLogger, systemClock } from '@kube-proxy/core';
import { dryRunSocketOpener, localSocketOpener, newProxyCounters, FdBudget } from '@kube-proxy/userspace-proxy';
import { eventually, exchange, nameServer, type TestServer } from '@kube-proxy/userspace-proxy/testing';
import { context, RecordingIptables, service, slice } from '../testing/proxier-fixtures.js';
import { UserspaceProxier } from './userspace-proxier.js';

describe('UserspaceProxier', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function servers(...names: string[]): Promise<TestServer[]> {
    const list = await Promise.all(names.map((n) => nameServer(n)));
    for (const s of list) cleanups.push(() => s.close());
    return list;
  }

  function start(options: { iptables?: RecordingIptables | null; dryRun?: boolean; portRange?: string } = {}) {
    const ctx = context({ dryRun: options.dryRun ?? false, config: { portRange: options.portRange ?? '' } });
    const counters = newProxyCounters();
    const iptables = options.iptables === undefined ? new RecordingIptables() : options.iptables;
    const proxier = new UserspaceProxier({
      family: 'IPv4',
      context: ctx,
      iptables,
      openSocket: ctx.dryRun
        ? dryRunSocketOpener()
        : localSocketOpener({ family: 'IPv4', listenIP: '127.0.0.1', udpIdleTimeoutMs: 250, counters, budget: new FdBudget(1000), clock: systemClock, logger: nullLogger }),
      counters,
      clock: systemClock,
      logger: nullLogger,
    });
    void proxier.syncLoop();
    cleanups.push(() => proxier.stop());
    return { proxier, iptables, ctx };
  }

  const syncsAfter = async (proxier: UserspaceProxier, n: number) => expect(await eventually(() => proxier.stats.syncs >= n)).toBe(true);

  it('opens a proxy socket per service port, captures its addresses to it, and proxies to the endpoints', async () => {
    const [a, b] = await servers('a', 'b');
    const { proxier, iptables } = start();
    proxier.onServiceAdd(service('web', '10.96.0.10', [{ name: 'http', port: 80, nodePort: 30080 }], { type: 'NodePort' }));
    proxier.onEndpointSliceAdd(slice('web', '1', 'http', a!.target.port, [{ ip: '127.0.0.1' }]));
    proxier.onEndpointSliceAdd(slice('web', '2', 'http', b!.target.port, [{ ip: '127.0.0.1' }]));
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await proxier.firstSync();

    const port = proxier.sockets.get('default/web:http')!.internal.port;
    expect(port).toBeGreaterThan(0);
    // Listening on one address: containers and host are DNATed to it.
    expect(iptables!.lastPayload).toContain(
      `-A KUBE-PORTALS-CONTAINER -m comment --comment default/web:http -p tcp -m tcp --dport 80 -d 10.96.0.10/32 -j DNAT --to-destination 127.0.0.1:${port}`,
    );
    expect(iptables!.lastPayload).toContain(`-A KUBE-NODEPORT-CONTAINER -m comment --comment default/web:http -p tcp -m tcp --dport 30080 -j DNAT --to-destination 127.0.0.1:${port}`);
    expect(iptables!.rules).toEqual([
      '-I nat OUTPUT -m comment --comment handle ClusterIPs; NOTE: this must be before the NodePort rules -j KUBE-PORTALS-HOST',
      '-I nat PREROUTING -m comment --comment handle ClusterIPs; NOTE: this must be before the NodePort rules -j KUBE-PORTALS-CONTAINER',
      '-A nat OUTPUT -m addrtype --dst-type LOCAL -m comment --comment handle service NodePorts; NOTE: this must be the last rule in the chain -j KUBE-NODEPORT-HOST',
      '-A nat PREROUTING -m addrtype --dst-type LOCAL -m comment --comment handle service NodePorts; NOTE: this must be the last rule in the chain -j KUBE-NODEPORT-CONTAINER',
      '-I filter INPUT -m comment --comment Ensure that non-local NodePort traffic can flow -j KUBE-NODEPORT-NON-LOCAL',
    ]);
    const names = [];
    for (let i = 0; i < 4; i++) names.push((await exchange(port)).name);
    expect(names.sort()).toEqual(['a', 'a', 'b', 'b']);
  });

  it('follows endpoint changes on the same socket, and closes the socket and its rules with the service', async () => {
    const [a, b] = await servers('a', 'b');
    const { proxier, iptables } = start();
    const svc = service('web', '10.96.0.10', [{ name: 'http', port: 80 }]);
    const sliceA = slice('web', '1', 'http', a!.target.port, [{ ip: '127.0.0.1' }]);
    proxier.onServiceAdd(svc);
    proxier.onEndpointSliceAdd(sliceA);
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await proxier.firstSync();
    const port = proxier.sockets.get('default/web:http')!.internal.port;
    expect((await exchange(port)).name).toBe('a');

    proxier.onEndpointSliceDelete(sliceA);
    proxier.onEndpointSliceAdd(slice('web', '2', 'http', b!.target.port, [{ ip: '127.0.0.1' }]));
    await syncsAfter(proxier, 2);
    expect(proxier.sockets.get('default/web:http')!.internal.port).toBe(port);
    expect((await exchange(port)).name).toBe('b');

    proxier.onServiceDelete(svc);
    await syncsAfter(proxier, 3);
    expect(proxier.sockets.size).toBe(0);
    expect(iptables!.lastPayload).not.toContain('default/web:http');
    await expect(exchange(port)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('takes proxy ports from --proxy-port-range, lowest free first, per protocol', async () => {
    const base = 42000 + Math.floor(Math.random() * 2000);
    const { proxier: ranged } = start({ portRange: `${base}-${base + 5}`, iptables: null });
    ranged.onServiceAdd(service('dns', '10.96.0.53', [{ name: 'dns', port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53 }]));
    ranged.onServiceAdd(service('web', '10.96.0.10', [{ name: 'http', port: 80 }]));
    ranged.onServicesSynced();
    ranged.onEndpointSlicesSynced();
    await ranged.firstSync();
    const portOf = (key: string) => ranged.sockets.get(key)!.internal.port;
    expect([portOf('default/dns:dns'), portOf('default/dns:dns-tcp'), portOf('default/web:http')]).toEqual([base, base, base + 1]);
  });

  it('keeps serving and retries when the capture rules cannot be installed', async () => {
    const [a] = await servers('a');
    const iptables = new RecordingIptables();
    iptables.failRestores = 1;
    const { proxier } = start({ iptables });
    proxier.onServiceAdd(service('web', '10.96.0.10', [{ name: 'http', port: 80 }]));
    proxier.onEndpointSliceAdd(slice('web', '1', 'http', a!.target.port, [{ ip: '127.0.0.1' }]));
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    expect(await eventually(() => proxier.stats.restoreFailures === 1)).toBe(true);
    const port = proxier.sockets.get('default/web:http')!.internal.port;
    expect((await exchange(port)).name).toBe('a');
    // Retried after syncPeriod (1 s here).
    await proxier.firstSync();
    expect(iptables.payloads).toHaveLength(2);
    expect(proxier.stats.failedSyncs).toBe(1);
  });

  it('gives external traffic its own socket when the traffic policies pick different endpoints', async () => {
    const [local, remote] = await servers('local', 'remote');
    const { proxier, iptables } = start();
    proxier.onServiceAdd(
      service('shop', '10.96.1.21', [{ name: 'http', port: 80, nodePort: 30081 }], { type: 'NodePort', externalTrafficPolicy: 'Local' }),
    );
    proxier.onEndpointSliceAdd(slice('shop', '1', 'http', local!.target.port, [{ ip: '127.0.0.1' }]));
    proxier.onEndpointSliceAdd(slice('shop', '2', 'http', remote!.target.port, [{ ip: '127.0.0.1', node: 'node-2' }]));
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await proxier.firstSync();
    const entry = proxier.sockets.get('default/shop:http')!;
    const internal = entry.internal.port;
    const external = entry.external!.port;
    expect(external).not.toBe(internal);
    expect(iptables!.lastPayload).toContain(`--dport 30081 -j DNAT --to-destination 127.0.0.1:${external}`);
    const viaExternal = new Set<string>();
    const viaInternal = new Set<string>();
    for (let i = 0; i < 4; i++) {
      viaExternal.add((await exchange(external)).name);
      viaInternal.add((await exchange(internal)).name);
    }
    expect(viaExternal).toEqual(new Set(['local']));
    expect(viaInternal).toEqual(new Set(['local', 'remote']));
  });

  it('--dry-run opens nothing, installs nothing, and prints the port table and the capture rules', async () => {
    const { proxier, ctx } = start({ dryRun: true, iptables: null, portRange: '36000-36099' });
    proxier.onServiceAdd(service('web', '10.96.0.10', [{ name: 'http', port: 80 }]));
    proxier.onEndpointSliceAdd(slice('web', '1', 'http', 8080, [{ ip: '10.244.1.11' }]));
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await proxier.firstSync();
    const out = ctx.dryRunSink.text;
    expect(out).toMatch(/^# sync 1 userspace \S+Z\n# proxy sockets on 127\.0\.0\.1\n/);
    expect(out).toContain('# default/web:http  TCP       36000       all     10.244.1.11:8080\n');
    expect(out).toContain('-A KUBE-PORTALS-CONTAINER -m comment --comment default/web:http -p tcp -m tcp --dport 80 -d 10.96.0.10/32 -j DNAT --to-destination 127.0.0.1:36000\n');
    await expect(exchange(36000, '', 500)).rejects.toThrow();
  });
});
