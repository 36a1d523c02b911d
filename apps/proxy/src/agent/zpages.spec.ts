import { defaultConfiguration, nullLogger, PromProxyMetrics, systemClock, type FlagValue } from '@kube-proxy/core';
import { RecordingLogger } from '@kube-proxy/core/testing';
import { ManagedHttpServer } from './managed-http-server.js';
import { metricsHandler } from './metrics-handler.js';
import { httpGet } from './testing/http-get.js';
import { flagzText, goUnixDateUTC, statuszText, uptimeText } from './zpages.js';

const WARNING =
  'Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.';

describe('z-pages text', () => {
  it('prints times as upstream: Go UnixDate in UTC, and "H hr MM min SS sec"', () => {
    expect(goUnixDateUTC(Date.UTC(2024, 10, 27, 22, 35, 1))).toBe('Wed Nov 27 22:35:01 UTC 2024');
    expect(goUnixDateUTC(Date.UTC(2026, 11, 6, 7, 5, 9))).toBe('Sun Dec  6 07:05:09 UTC 2026');
    expect(uptimeText(36_000)).toBe('0 hr 00 min 36 sec');
    expect(uptimeText((26 * 3600 + 61) * 1000 + 999)).toBe('26 hr 01 min 01 sec');
  });

  it('/statusz: header, then one field a line', () => {
    const start = Date.UTC(2026, 11, 6, 17, 0, 0);
    const text = statuszText({
      startedMs: start,
      nowMs: start + 75_000,
      binaryVersion: '0.1.0',
      emulationVersion: '1.37',
      runtimeVersion: 'v20.19.0',
      paths: ['/metrics', '/configz', '/statusz'],
    });
    expect(text).toBe(
      `\nkube-proxy statusz\n${WARNING}\n\n` +
        'Started: Sun Dec  6 17:00:00 UTC 2026\nUp: 0 hr 01 min 15 sec\nNode.js version: v20.19.0\n' +
        'Binary version: 0.1.0\nEmulation version: 1.37\nPaths: /configz /metrics /statusz\n',
    );
  });

  it('/flagz: every flag, sorted, the given value or the default as pflag prints it', () => {
    const given = new Map<string, FlagValue>([
      ['proxy-mode', 'nftables'],
      ['iptables-sync-period', '1m'],
      ['feature-gates', { KubeProxyIPVS: false, AllowServiceExternalIPs: true }],
      ['nodeport-addresses', ['primary', '127.0.0.0/8']],
    ]);
    const text = flagzText(given);
    expect(text.startsWith(`\nkube-proxy flags\n${WARNING}\n\n`)).toBe(true);
    const lines = text.trimEnd().split('\n').slice(4);
    const names = lines.map((l) => l.slice(0, l.indexOf('=')));
    expect(names).toEqual([...names].sort());
    expect(lines).toEqual(
      expect.arrayContaining([
        'proxy-mode=nftables',
        'iptables-sync-period=1m0s',
        'feature-gates=AllowServiceExternalIPs=true,KubeProxyIPVS=false',
        'nodeport-addresses=[primary,127.0.0.0/8]',
        'bind-address=0.0.0.0',
        'conntrack-max-per-core=32768',
        'masquerade-all=false',
        'cluster-cidr=',
        'ipvs-exclude-cidrs=[]',
        'config-sync-period=15m0s',
      ]),
    );
    // Removed flags are not listed.
    expect(text).not.toMatch(/^(healthz|metrics)-port=/m);
  });
});

describe('z-pages on the metrics server (real HTTP)', () => {
  const config = { ...defaultConfiguration(), mode: 'iptables' };
  const servers: ManagedHttpServer[] = [];

  async function serve(zpages?: Parameters<typeof metricsHandler>[0]['zpages']): Promise<number> {
    const server = new ManagedHttpServer({
      name: 'metrics',
      address: { host: '127.0.0.1', port: 0, text: '127.0.0.1:0' },
      handler: metricsHandler({ metrics: new PromProxyMetrics({}), mode: 'iptables', config, logger: nullLogger, ...(zpages ? { zpages } : {}) }),
      logger: new RecordingLogger(),
      clock: systemClock,
      hardFail: true,
    });
    await server.start();
    servers.push(server);
    return server.port()!;
  }

  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it('serves /statusz and /flagz as text/plain with nosniff', async () => {
    const port = await serve({ statusz: () => 'S\n', flagz: () => flagzText(new Map([['proxy-mode', 'iptables']])) });
    const s = await httpGet(port, '/statusz');
    expect(s).toMatchObject({ status: 200, body: 'S\n' });
    expect(s.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(s.headers['x-content-type-options']).toBe('nosniff');
    const f = await httpGet(port, '/flagz?x=1');
    expect(f.status).toBe(200);
    expect(f.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(f.body).toContain('\nproxy-mode=iptables\n');
  });

  it('404s a page whose gate is off', async () => {
    const port = await serve({ flagz: () => 'F\n' });
    expect((await httpGet(port, '/statusz')).status).toBe(404);
    expect((await httpGet(port, '/flagz')).status).toBe(200);
    const none = await serve();
    expect((await httpGet(none, '/flagz')).status).toBe(404);
  });
});
