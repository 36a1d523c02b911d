import { connect } from 'node:net';
import { nullLogger, systemClock } from '@kube-proxy/core';
import { eventually, exchange, nameServer, refusedTarget, sourceServer, type TestServer } from './testing/loopback.js';
import { newProxyCounters } from './counters.js';
import { EndpointPicker } from './endpoint-picker.js';
import { FdBudget } from './fd-budget.js';
import { TcpProxySocket } from './tcp-proxy-socket.js';

/** Real sockets on loopback: the proxy between a client and endpoint servers. */
describe('TcpProxySocket', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function servers(...names: string[]) {
    const list = await Promise.all(names.map((n) => nameServer(n)));
    for (const s of list) cleanups.push(() => s.close());
    return list;
  }

  async function proxyTo(targets: readonly TestServer['target'][], affinitySeconds = 0, budget = new FdBudget(1000)) {
    const picker = new EndpointPicker(systemClock);
    picker.update(targets, affinitySeconds);
    const counters = newProxyCounters();
    const proxy = new TcpProxySocket(picker, counters, budget, nullLogger);
    const port = await proxy.listen('127.0.0.1', 0);
    cleanups.push(() => proxy.close());
    return { picker, counters, proxy, port, budget };
  }

  it('spreads new connections round robin over the endpoints', async () => {
    const eps = await servers('a', 'b', 'c');
    const { port } = await proxyTo(eps.map((s) => s.target));
    const names: string[] = [];
    for (let i = 0; i < 30; i++) names.push((await exchange(port)).name);
    expect(names.filter((n) => n === 'a')).toHaveLength(10);
    expect(names.filter((n) => n === 'b')).toHaveLength(10);
    expect(names.filter((n) => n === 'c')).toHaveLength(10);
    expect(names.slice(0, 3)).toEqual(['a', 'b', 'c']);
  });

  it('carries data intact both ways and passes the client half-close on (the reply comes after it)', async () => {
    const [a] = await servers('a');
    const { port, counters } = await proxyTo([a!.target]);
    const payload = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    const reply = await exchange(port, payload, 10_000);
    expect(reply).toEqual({ name: 'a', rest: `bytes=${payload.length}\n` });
    expect(await eventually(() => counters.tcpActive === 0)).toBe(true);
    expect(counters.tcpAccepted).toBe(1);
  });

  it('ClientIP affinity keeps a client on one endpoint', async () => {
    const eps = await servers('a', 'b', 'c');
    const { port } = await proxyTo(eps.map((s) => s.target), 3600);
    const names = new Set<string>();
    for (let i = 0; i < 12; i++) names.add((await exchange(port)).name);
    expect(names.size).toBe(1);
  });

  it('fails over when an endpoint refuses, and counts the failed tries', async () => {
    const [b] = await servers('b');
    const dead = await refusedTarget();
    const { port, counters } = await proxyTo([dead, b!.target]);
    const names: string[] = [];
    for (let i = 0; i < 10; i++) names.push((await exchange(port)).name);
    expect(names).toEqual(Array(10).fill('b'));
    expect(counters.endpointDialFailures).toBeGreaterThanOrEqual(5);
    expect(counters.tcpRejected).toBe(0);
  });

  it('resets the client when no endpoint exists or none answers', async () => {
    const { port, counters, picker } = await proxyTo([]);
    await expect(exchange(port)).rejects.toThrow(/ECONNRESET/);
    picker.update([await refusedTarget()], 0);
    await expect(exchange(port)).rejects.toThrow(/ECONNRESET/);
    expect(counters.tcpRejected).toBe(2);
    expect(counters.endpointDialFailures).toBe(4); // one endpoint, four growing timeouts
  });

  it('a long transfer completes when its endpoint is removed from the service meanwhile', async () => {
    const [a, b] = await servers('a', 'b');
    const { port, picker } = await proxyTo([a!.target]);
    const chunk = Buffer.alloc(256 * 1024, 1);
    const chunks = 64; // 16 MiB, written in steps so the removal lands mid-transfer
    const done = new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.on('connect', async () => {
        for (let i = 0; i < chunks; i++) {
          if (i === chunks / 2) picker.update([b!.target], 0);
          if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
          await new Promise((r) => setImmediate(r));
        }
        socket.end();
      });
    });
    expect(await done).toBe(`a\nbytes=${chunk.length * chunks}\n`);
    expect((await exchange(port)).name).toBe('b');
  });

  it('backpressure: a slow endpoint stops the proxy reading from the client instead of buffering', async () => {
    const slow = await nameServer('slow', { pauseMs: 800 });
    cleanups.push(() => slow.close());
    const { port } = await proxyTo([slow.target]);
    const total = 64 * 1024 * 1024;
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    cleanups.push(() => void socket.destroy());
    await new Promise((r) => socket.once('connect', r));
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString()));
    const ended = new Promise((r) => socket.once('end', r));
    socket.end(Buffer.alloc(total, 3));
    await new Promise((r) => setTimeout(r, 400));
    // The endpoint reads nothing yet: only the kernel buffers of two loopback connections and the
    // proxy's stream high-water marks can hold data, far from 64 MiB; the rest waits in the client.
    expect(socket.writableLength).toBeGreaterThan(total / 2);
    await ended;
    expect(text).toBe(`slow\nbytes=${total}\n`);
  });

  it('backpressure the other way: a client that does not read stops the proxy reading from the endpoint', async () => {
    const total = 64 * 1024 * 1024;
    const source = await sourceServer(total);
    cleanups.push(() => source.close());
    const { port } = await proxyTo([source.target]);
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    cleanups.push(() => void socket.destroy());
    socket.pause();
    await new Promise((r) => setTimeout(r, 500));
    // The endpoint could hand over only what kernel buffers and the proxy's read buffers hold.
    expect(source.sent()).toBeLessThan(total / 2);
    let received = 0;
    socket.on('data', (c: Buffer) => (received += c.length));
    const ended = new Promise((r) => socket.once('end', r));
    socket.resume();
    await ended;
    expect(received).toBe(total);
  });

  it('close() stops new connections; established ones carry on', async () => {
    const [a] = await servers('a');
    const { port, proxy } = await proxyTo([a!.target]);
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString()));
    const ended = new Promise((r) => socket.once('end', r));
    await eventually(() => text === 'a\n');
    proxy.close();
    await expect(exchange(port)).rejects.toThrow(/ECONNREFUSED/);
    socket.end('after close');
    await ended;
    expect(text).toBe('a\nbytes=11\n');
  });

  it('resets new connections past the descriptor budget and returns descriptors as connections end', async () => {
    const [a] = await servers('a');
    const { port, counters, budget } = await proxyTo([a!.target], 0, new FdBudget(2));
    const held = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    let text = '';
    held.on('data', (c: Buffer) => (text += c.toString()));
    const ended = new Promise((r) => held.once('end', r));
    expect(await eventually(() => text === 'a\n')).toBe(true);
    expect(budget.inUse).toBe(2);
    await expect(exchange(port)).rejects.toThrow(/ECONNRESET/);
    expect(counters.tcpRejected).toBe(1);
    held.end();
    await ended;
    expect(await eventually(() => budget.inUse === 0)).toBe(true);
    expect((await exchange(port)).name).toBe('a');
    // Refused dials give their descriptors back too.
    const { port: deadPort, budget: deadBudget } = await proxyTo([await refusedTarget()], 0, new FdBudget(2));
    await expect(exchange(deadPort)).rejects.toThrow(/ECONNRESET/);
    expect(deadBudget.inUse).toBe(0);
  });
});
