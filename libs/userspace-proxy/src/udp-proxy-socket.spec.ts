import { nullLogger, systemClock } from '@kube-proxy/core';
import { eventually, udpClient, udpNameServer } from './testing/loopback.js';
import { newProxyCounters } from './counters.js';
import { EndpointPicker } from './endpoint-picker.js';
import { FdBudget } from './fd-budget.js';
import { UdpProxySocket } from './udp-proxy-socket.js';

describe('UdpProxySocket', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(names: string[], idleTimeoutMs: number, affinitySeconds = 0, budget = new FdBudget(1000)) {
    const servers = await Promise.all(names.map((n) => udpNameServer(n)));
    for (const s of servers) cleanups.push(() => s.close());
    const picker = new EndpointPicker(systemClock);
    picker.update(servers.map((s) => s.target), affinitySeconds);
    const counters = newProxyCounters();
    const proxy = new UdpProxySocket('IPv4', picker, idleTimeoutMs, counters, budget, nullLogger);
    const port = await proxy.listen('127.0.0.1', 0);
    cleanups.push(() => proxy.close());
    const client = async () => {
      const c = await udpClient(port);
      cleanups.push(() => c.close());
      return c;
    };
    return { picker, counters, proxy, port, client, servers };
  }

  it('answers several clients, each from the proxy address it sent to, one endpoint per client', async () => {
    const { client, counters } = await setup(['a', 'b'], 5000);
    const clients = await Promise.all([client(), client(), client(), client()]);
    const first = await Promise.all(clients.map((c, i) => c.ask(`hello${i}`)));
    // Connected client sockets: the kernel drops replies from any other source, so an answer proves
    // it came back from the proxy socket's address.
    expect(first.map((r) => r.split(':')[1])).toEqual(['hello0', 'hello1', 'hello2', 'hello3']);
    expect(new Set(first.map((r) => r.split(':')[0]))).toEqual(new Set(['a', 'b']));
    // Later datagrams of a client stay on its association's endpoint.
    for (let round = 0; round < 3; round++) {
      const again = await Promise.all(clients.map((c, i) => c.ask(`again${i}`)));
      expect(again.map((r) => r.split(':')[0])).toEqual(first.map((r) => r.split(':')[0]));
    }
    expect(counters.udpAssociationsOpened).toBe(4);
    expect(counters.udpAssociationsActive).toBe(4);
  });

  it('closes an association after the idle timeout; the next datagram opens a new one (round robin moves on)', async () => {
    const { client, counters, proxy } = await setup(['a', 'b'], 250);
    const c = await client();
    expect(await c.ask('1')).toBe('a:1');
    expect(await c.ask('2')).toBe('a:2');
    expect(await eventually(() => proxy.associationCount === 0, 2000)).toBe(true);
    expect(counters.udpAssociationsActive).toBe(0);
    expect(await c.ask('3')).toBe('b:3');
    expect(counters.udpAssociationsOpened).toBe(2);
  });

  it('traffic keeps an association alive beyond the timeout', async () => {
    const { client, counters } = await setup(['a', 'b'], 300);
    const c = await client();
    for (let i = 0; i < 8; i++) {
      expect(await c.ask(`m${i}`)).toBe(`a:m${i}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(counters.udpAssociationsOpened).toBe(1);
  });

  it('drops datagrams when the service has no endpoints, and serves once it has', async () => {
    const { client, counters, picker, servers } = await setup(['a'], 1000);
    const targets = servers.map((s) => s.target);
    picker.update([], 0);
    const c = await client();
    await expect(c.ask('lost', 300)).rejects.toThrow(/no UDP reply/);
    expect(counters.udpDropped).toBe(1);
    picker.update(targets, 0);
    expect(await c.ask('found')).toBe('a:found');
  });

  it('close() ends the socket and its associations', async () => {
    const { client, proxy, counters } = await setup(['a'], 5000);
    const c = await client();
    expect(await c.ask('x')).toBe('a:x');
    proxy.close();
    expect(counters.udpAssociationsActive).toBe(0);
    await expect(c.ask('y', 300)).rejects.toThrow();
  });

  it('drops datagrams of new clients once the descriptor budget is used up, and takes them again after an idle-out', async () => {
    const budget = new FdBudget(1);
    const { client, counters, proxy } = await setup(['a'], 200, 0, budget);
    const first = await client();
    const second = await client();
    expect(await first.ask('1')).toBe('a:1');
    await expect(second.ask('2', 300)).rejects.toThrow(/no UDP reply/);
    expect(counters.udpDropped).toBe(1);
    expect(await eventually(() => proxy.associationCount === 0, 2000)).toBe(true);
    expect(budget.inUse).toBe(0);
    expect(await second.ask('3')).toBe('a:3');
  });
});
