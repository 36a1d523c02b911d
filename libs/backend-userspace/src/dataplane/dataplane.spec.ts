import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { RecordingLogger } from '@kube-proxy/core/testing';
import { eventually, exchange, nameServer, type TestServer } from '@kube-proxy/userspace-proxy/testing';
import { DataPlaneClient, type DataPlaneChannel } from './client.js';
import { DataPlaneHost } from './host.js';
import type { FromDataPlane, ToDataPlane } from './protocol.js';
import { allocateCounters, sharedCounters } from './shared-counters.js';

/**
 * Client and host over a real MessageChannel (structured clone, asynchronous delivery), as they talk
 * across the worker boundary; the proxy sockets are real sockets on 127.0.0.1.
 */
describe('data plane client ↔ host', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function connect(block = allocateCounters()) {
    const { port1, port2 } = new MessageChannel();
    let lost: ((reason: string) => void) | undefined;
    const host = new DataPlaneHost({ postMessage: (m: FromDataPlane) => port2.postMessage(m) }, { udpIdleTimeoutMs: 250, fdBudget: 1000, counters: { IPv4: block } });
    port2.on('message', (m: ToDataPlane) => host.handle(m));
    const sent: ToDataPlane[] = [];
    const channel: DataPlaneChannel = {
      postMessage: (m) => {
        sent.push(m);
        port1.postMessage(m);
      },
      on: (_e, listener) => (port1 as MessagePort).on('message', listener),
      onLost: (listener) => {
        lost = listener;
      },
      terminate: () => port1.close(),
    };
    const logger = new RecordingLogger();
    const client = new DataPlaneClient(() => channel, logger);
    cleanups.push(() => {
      host.closeAll();
      port1.close();
      port2.close();
    });
    return { client, logger, sent, counters: sharedCounters(block), loseIt: (reason: string) => lost?.(reason) };
  }

  async function servers(...names: string[]): Promise<TestServer[]> {
    const list = await Promise.all(names.map((n) => nameServer(n)));
    for (const s of list) cleanups.push(() => s.close());
    return list;
  }

  it('opens a socket in the host, follows endpoint updates, closes it; counters are shared memory', async () => {
    const [a, b] = await servers('a', 'b');
    const { client, counters } = connect();
    const open = client.opener('IPv4', '127.0.0.1');
    const socket = await open({ protocol: 'TCP', port: 0, endpoints: [a!.target], affinitySeconds: 0 });
    expect(socket.port).toBeGreaterThan(0);
    expect((await exchange(socket.port)).name).toBe('a');
    socket.update([b!.target], 0);
    expect(socket.endpoints).toEqual([b!.target]);
    await new Promise((r) => setTimeout(r, 50)); // let the update message land
    expect((await exchange(socket.port)).name).toBe('b');
    expect(counters.tcpAccepted).toBe(2);
    socket.close();
    await new Promise((r) => setTimeout(r, 50));
    await expect(exchange(socket.port)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('sends an update across only when endpoints or affinity change (every sync updates every socket)', async () => {
    const [a, b] = await servers('a', 'b');
    const { client, sent } = connect();
    const socket = await client.opener('IPv4', '127.0.0.1')({ protocol: 'TCP', port: 0, endpoints: [a!.target], affinitySeconds: 0 });
    const updates = () => sent.filter((m) => m.op === 'update').length;
    socket.update([{ ...a!.target }], 0);
    socket.update([a!.target], 0);
    expect(updates()).toBe(0);
    socket.update([a!.target, b!.target], 0);
    expect(updates()).toBe(1);
    socket.update([a!.target, b!.target], 30);
    expect(updates()).toBe(2);
    expect(socket.affinitySeconds).toBe(30);
    socket.close();
  });

  it('passes bind errors back with their code (the allocator moves on when a port is busy)', async () => {
    const [a] = await servers('a');
    const { client } = connect();
    const open = client.opener('IPv4', '127.0.0.1');
    const first = await open({ protocol: 'UDP', port: 0, endpoints: [a!.target], affinitySeconds: 0 });
    await expect(open({ protocol: 'UDP', port: first.port, endpoints: [], affinitySeconds: 0 })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    first.close();
  });

  it('relays the data plane\'s log lines to the main thread\'s logger', async () => {
    const { client, logger } = connect();
    const open = client.opener('IPv4', '127.0.0.1');
    const socket = await open({ protocol: 'TCP', port: 0, endpoints: [], affinitySeconds: 0 });
    await expect(exchange(socket.port)).rejects.toThrow(/ECONNRESET/);
    expect(await eventually(() => logger.entries.some((e) => e.message.startsWith('No endpoint reachable')))).toBe(true);
    socket.close();
  });

  it('when the data plane is lost: pending opens fail, listeners hear it, handles go quiet', async () => {
    const { client, loseIt } = connect();
    const reasons: string[] = [];
    client.onLost((r) => reasons.push(r));
    const open = client.opener('IPv4', '127.0.0.1');
    const socket = await open({ protocol: 'TCP', port: 0, endpoints: [], affinitySeconds: 0 });
    const pending = open({ protocol: 'TCP', port: 0, endpoints: [], affinitySeconds: 0 });
    loseIt('worker exited with code 1');
    await expect(pending).rejects.toThrow('worker exited with code 1');
    expect(reasons).toEqual(['worker exited with code 1']);
    expect(() => socket.update([], 0)).not.toThrow();
    socket.close();
  });
});
