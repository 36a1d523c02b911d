// The localhost NodePort listeners on the shared userspace proxy engine, with real sockets on
// 127.0.0.1 (ports the kernel hands out, so nothing collides with the host).
import { createServer, type Server } from 'node:net';
import type { IPFamily } from '@kube-proxy/core';
import { FakeClock, RecordingLogger } from '@kube-proxy/core/testing';
import { FdBudget, newProxyCounters } from '@kube-proxy/userspace-proxy';
import { exchange, nameServer, type TestServer } from '@kube-proxy/userspace-proxy/testing';
import { LocalhostNodePortListeners, type LocalhostListenerObserver } from './localhost-listeners.js';
import type { LocalhostNodePort } from './localhost-nodeport.js';
import { freePort } from '../testing/free-port.js';

class RecordingObserver implements LocalhostListenerObserver {
  readonly counts: Array<[IPFamily, number]> = [];
  failures = 0;
  listeners(family: IPFamily, count: number): void {
    this.counts.push([family, count]);
  }
  creationFailed(): void {
    this.failures++;
  }
  get last(): number | undefined {
    return this.counts.at(-1)?.[1];
  }
}

function refused(port: number): Promise<string> {
  return exchange(port, '', 2000).then(
    () => 'connected',
    (err: NodeJS.ErrnoException) => err.code ?? String(err),
  );
}

describe('LocalhostNodePortListeners', () => {
  const clock = new FakeClock();
  let servers: TestServer[] = [];
  let listeners: LocalhostNodePortListeners;
  let observer: RecordingObserver;
  let logger: RecordingLogger;

  beforeEach(() => {
    observer = new RecordingObserver();
    logger = new RecordingLogger();
    listeners = new LocalhostNodePortListeners({ family: 'IPv4', counters: newProxyCounters(), budget: new FdBudget(1000), clock, logger, observer });
  });

  afterEach(async () => {
    listeners.close();
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });

  async function endpoints(...names: string[]) {
    const started = await Promise.all(names.map((n) => nameServer(n)));
    servers.push(...started);
    return started.map((s) => s.target);
  }

  it('listens on 127.0.0.1 (::1 for IPv6) at the node port and relays to an endpoint', async () => {
    expect(listeners.listenIP).toBe('127.0.0.1');
    expect(new LocalhostNodePortListeners({ family: 'IPv6', counters: newProxyCounters(), budget: new FdBudget(10), clock, logger }).listenIP).toBe('::1');
    const nodePort = await freePort();
    await listeners.sync([{ nodePort, endpoints: await endpoints('web-a'), affinitySeconds: 0 }]);
    expect(listeners.ports).toEqual([nodePort]);
    expect(observer.counts).toEqual([['IPv4', 1]]);
    expect(await exchange(nodePort, 'hello')).toEqual({ name: 'web-a', rest: 'bytes=5\n' });
  });

  it('creates and removes listeners as service ports come and go; a port without endpoints has none (refused)', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const [a, b] = await endpoints('a', 'b');
    await listeners.sync([
      { nodePort: p1, endpoints: [a!], affinitySeconds: 0 },
      { nodePort: p2, endpoints: [], affinitySeconds: 0 },
    ]);
    expect(listeners.ports).toEqual([p1]);
    expect(await refused(p2)).toBe('ECONNREFUSED');
    // Endpoints change: the same listener, new endpoints.
    await listeners.sync([{ nodePort: p1, endpoints: [b!], affinitySeconds: 0 }]);
    expect(listeners.endpointsOf(p1)).toEqual([b!.key]);
    expect((await exchange(p1)).name).toBe('b');
    // The service port is gone: its listener is closed.
    await listeners.sync([]);
    expect(listeners.ports).toEqual([]);
    expect(observer.last).toBe(0);
    expect(await refused(p1)).toBe('ECONNREFUSED');
  });

  it('round-robins without affinity; ClientIP affinity pins every connection (all come from loopback) to one endpoint', async () => {
    const nodePort = await freePort();
    const targets = await endpoints('a', 'b');
    await listeners.sync([{ nodePort, endpoints: targets, affinitySeconds: 0 }]);
    const plain = [];
    for (let i = 0; i < 4; i++) plain.push((await exchange(nodePort)).name);
    expect(new Set(plain)).toEqual(new Set(['a', 'b']));

    await listeners.sync([{ nodePort, endpoints: targets, affinitySeconds: 10800 }]);
    const sticky = [];
    for (let i = 0; i < 4; i++) sticky.push((await exchange(nodePort)).name);
    expect(new Set(sticky).size).toBe(1);
    // Past the timeout the pin is renewed by the next connection (and holds again).
    clock.advance(10800 * 1000 + 1);
    const after = [(await exchange(nodePort)).name, (await exchange(nodePort)).name];
    expect(after[1]).toBe(after[0]);
  });

  it('a port another process holds is logged and counted, the other listeners still come up, and it is tried again next sync', async () => {
    const busyServer: Server = createServer();
    const busy = await new Promise<number>((resolve) => busyServer.listen(0, '127.0.0.1', () => resolve((busyServer.address() as { port: number }).port)));
    try {
      const free = await freePort();
      const [a] = await endpoints('a');
      const wanted: LocalhostNodePort[] = [
        { nodePort: busy, endpoints: [a!], affinitySeconds: 0 },
        { nodePort: free, endpoints: [a!], affinitySeconds: 0 },
      ];
      await listeners.sync(wanted);
      expect(listeners.ports).toEqual([free]);
      expect(observer.failures).toBe(1);
      expect(logger.entries.some((e) => e.level === 'error' && e.message === 'Failed to create localhost nodeport proxy' && e.meta['port'] === busy)).toBe(true);
      await listeners.sync(wanted);
      expect(observer.failures).toBe(2);
      await new Promise<void>((resolve) => busyServer.close(() => resolve()));
      await listeners.sync(wanted);
      expect(listeners.ports).toEqual([busy, free].sort((x, y) => x - y));
      expect(observer.last).toBe(2);
    } finally {
      busyServer.close();
    }
  });

  it('close() stops every listener and reports none', async () => {
    const nodePort = await freePort();
    await listeners.sync([{ nodePort, endpoints: await endpoints('a'), affinitySeconds: 0 }]);
    listeners.close();
    expect(listeners.ports).toEqual([]);
    expect(observer.last).toBe(0);
    expect(await refused(nodePort)).toBe('ECONNREFUSED');
    await listeners.sync([{ nodePort, endpoints: [servers[0]!.target], affinitySeconds: 0 }]);
    expect(listeners.ports).toEqual([]);
  });
});
