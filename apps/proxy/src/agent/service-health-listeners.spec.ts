import { createServer, type Server } from 'node:net';
import { FakeClock, RecordingLogger } from '@kube-proxy/core/testing';
import { ProxierHealthTracker } from '@kube-proxy/core';
import { ServiceHealthListeners } from './service-health-listeners.js';
import { httpGet } from './testing/http-get.js';

// Real listeners on 127.0.0.1. healthCheckNodePort 0 asks the kernel for a free port; tests read
// the bound one back with listening().

function setup() {
  const clock = new FakeClock();
  const health = new ProxierHealthTracker(clock, 60_000);
  const logger = new RecordingLogger();
  const hcs = new ServiceHealthListeners({ checker: health, logger, nodeName: 'node-1', host: '127.0.0.1' });
  return { clock, health, logger, hcs };
}

describe('ServiceHealthListeners', () => {
  it('answers 503 without local endpoints and 200 with them, with upstream headers and body', async () => {
    const { hcs } = setup();
    try {
      await hcs.syncServices(new Map([['default/web', 0]]));
      const port = hcs.listening().get('default/web')!;

      const none = await httpGet(port, '/');
      expect(none.status).toBe(503);
      expect(none.headers['content-type']).toBe('application/json');
      expect(none.headers['x-content-type-options']).toBe('nosniff');
      expect(none.headers['x-load-balancing-endpoint-weight']).toBe('0');
      expect(none.body).toBe(
        '{\n\t"service": {\n\t\t"namespace": "default",\n\t\t"name": "web"\n\t},\n\t"localEndpoints": 0,\n\t"serviceProxyHealthy": true\n}',
      );

      await hcs.syncEndpoints(new Map([['default/web', 2]]));
      const two = await httpGet(port, '/any/path');
      expect(two.status).toBe(200);
      expect(two.headers['x-load-balancing-endpoint-weight']).toBe('2');
      expect(JSON.parse(two.body)).toEqual({ service: { namespace: 'default', name: 'web' }, localEndpoints: 2, serviceProxyHealthy: true });

      // A service missing from the endpoints map has 0.
      await hcs.syncEndpoints(new Map());
      expect((await httpGet(port, '/')).status).toBe(503);
    } finally {
      await hcs.close();
    }
  });

  it('answers 503 while the proxy is unhealthy, even with endpoints', async () => {
    const { hcs, health, clock } = setup();
    try {
      await hcs.syncServices(new Map([['ns/svc', 0]]));
      await hcs.syncEndpoints(new Map([['ns/svc', 1]]));
      health.updated('IPv4');
      health.queuedUpdate('IPv4');
      clock.advance(60_000);
      const res = await httpGet(hcs.listening().get('ns/svc')!, '/');
      expect(res.status).toBe(503);
      expect(JSON.parse(res.body).serviceProxyHealthy).toBe(false);
    } finally {
      await hcs.close();
    }
  });

  it('opens and closes listeners as services come and go', async () => {
    const { hcs } = setup();
    try {
      await hcs.syncServices(new Map([['a/one', 0], ['a/two', 0]]));
      const ports = hcs.listening();
      expect([...ports.keys()].sort()).toEqual(['a/one', 'a/two']);

      await hcs.syncServices(new Map([['a/two', 0]]));
      expect([...hcs.listening().keys()]).toEqual(['a/two']);
      expect(hcs.listening().get('a/two')).toBe(ports.get('a/two')); // left alone
      await expect(httpGet(ports.get('a/one')!, '/')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await hcs.close();
    }
    expect(hcs.listening().size).toBe(0);
  });

  it('keeps a service while either family reports it, with the larger endpoint count', async () => {
    const { hcs } = setup();
    try {
      await hcs.syncServices(new Map([['d/s', 0]]), 'IPv4');
      await hcs.syncServices(new Map([['d/s', 0]]), 'IPv6');
      await hcs.syncEndpoints(new Map([['d/s', 1]]), 'IPv4');
      await hcs.syncEndpoints(new Map([['d/s', 3]]), 'IPv6');
      const port = hcs.listening().get('d/s')!;
      expect(JSON.parse((await httpGet(port, '/')).body).localEndpoints).toBe(3);

      await hcs.syncServices(new Map(), 'IPv4');
      expect(hcs.listening().get('d/s')).toBe(port);
      await hcs.syncServices(new Map(), 'IPv6');
      expect(hcs.listening().size).toBe(0);
    } finally {
      await hcs.close();
    }
  });

  it('logs a port it cannot bind and tries again on the next sync', async () => {
    const { hcs, logger } = setup();
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen({ host: '127.0.0.1', port: 0 }, () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      await hcs.syncServices(new Map([['x/y', port]]));
      expect(logger.has('error', 'Failed to start healthcheck')).toBe(true);
      expect(hcs.listening().size).toBe(0);

      await new Promise<void>((r) => blocker.close(() => r()));
      await hcs.syncServices(new Map([['x/y', port]]));
      expect(hcs.listening().get('x/y')).toBe(port);
    } finally {
      await hcs.close();
      if (blocker.listening) blocker.close();
    }
  });
});
