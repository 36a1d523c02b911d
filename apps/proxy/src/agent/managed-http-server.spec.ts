import { createServer, type Server } from 'node:net';
import { FakeClock, RecordingLogger } from '@kube-proxy/core/testing';
import { ManagedHttpServer, SERVER_RETRY_MS, ServerBindError } from './managed-http-server.js';
import { httpGet } from './testing/http-get.js';

/** Occupies a port on 127.0.0.1, so the server under test cannot bind it. */
function occupy(): Promise<{ blocker: Server; port: number }> {
  return new Promise((resolve) => {
    const blocker = createServer();
    blocker.listen({ host: '127.0.0.1', port: 0 }, () => resolve({ blocker, port: (blocker.address() as { port: number }).port }));
  });
}

const closeNet = (s: Server) => new Promise<void>((r) => s.close(() => r()));
const settle = () => new Promise<void>((r) => setTimeout(r, 20));

function managed(port: number, hardFail: boolean, clock: FakeClock, logger: RecordingLogger): ManagedHttpServer {
  return new ManagedHttpServer({
    name: 'healthz',
    address: { host: '127.0.0.1', port, text: `127.0.0.1:${port}` },
    handler: (_req, res) => res.end('hi'),
    logger,
    clock,
    hardFail,
  });
}

describe('ManagedHttpServer bind failures', () => {
  it('logs and retries every 5 s without bindAddressHardFail, serving once the port is free', async () => {
    const { blocker, port } = await occupy();
    const clock = new FakeClock();
    const logger = new RecordingLogger();
    const server = managed(port, false, clock, logger);
    try {
      await server.start(); // does not throw
      expect(logger.has('error', 'healthz server failed')).toBe(true);
      expect(server.port()).toBeUndefined();
      expect(clock.nextTimerDelay()).toBe(SERVER_RETRY_MS);

      await closeNet(blocker);
      clock.advance(SERVER_RETRY_MS);
      await settle();
      expect(server.port()).toBe(port);
      expect((await httpGet(port, '/')).body).toBe('hi');
    } finally {
      await server.stop();
      if (blocker.listening) await closeNet(blocker);
    }
  });

  it('fails start() with bindAddressHardFail', async () => {
    const { blocker, port } = await occupy();
    const clock = new FakeClock();
    const server = managed(port, true, clock, new RecordingLogger());
    try {
      await expect(server.start()).rejects.toBeInstanceOf(ServerBindError);
      expect(clock.pendingTimers()).toBe(0);
    } finally {
      await server.stop();
      await closeNet(blocker);
    }
  });

  it('stop() cancels a pending retry', async () => {
    const { blocker, port } = await occupy();
    const clock = new FakeClock();
    const server = managed(port, false, clock, new RecordingLogger());
    await server.start();
    await server.stop();
    expect(clock.pendingTimers()).toBe(0);
    await closeNet(blocker);
  });
});
