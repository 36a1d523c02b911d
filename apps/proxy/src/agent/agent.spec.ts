import { createServer } from 'node:net';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { defaultConfiguration, METRICS_REGISTRY, PROXIER_HEALTH_UPDATER, PROXY_METRICS, SERVICE_HEALTH_SERVER, type KubeProxyConfiguration, type MetricsRegistry, type ProxierHealthUpdater, type ProxyMetrics, type ServiceHealthServer } from '@kube-proxy/core';
import { defineUpstreamModeMetrics, FakeClock, FakeSysctl, RecordingLogger } from '@kube-proxy/core/testing';
import { healthTimeoutMs, ProxyAgent } from './agent.js';
import { SYSCTL_CONNTRACK_MAX } from './conntrack-setup.js';
import { ServerBindError } from './managed-http-server.js';
import { ServiceHealthListeners } from './service-health-listeners.js';
import { httpGet } from './testing/http-get.js';

/**
 * The agent as the CLI runs it, with a fake backend in place of a proxier: the backend resolves the
 * agent's parts from the container under core's tokens and reports a sync the way a real proxier
 * does; the test then reads the results over real sockets.
 */
class FakeProxier {
  private readonly health?: ProxierHealthUpdater;
  private readonly metrics?: ProxyMetrics;
  private readonly services?: ServiceHealthServer;

  constructor(container: DependencyContainer) {
    const optional = <T>(token: symbol): T | undefined => (container.isRegistered(token, true) ? container.resolve<T>(token) : undefined);
    this.health = optional(PROXIER_HEALTH_UPDATER);
    this.metrics = optional(PROXY_METRICS);
    this.services = optional(SERVICE_HEALTH_SERVER);
    // An iptables backend defines its mode's metrics when it registers.
    const registry = optional<MetricsRegistry>(METRICS_REGISTRY);
    if (registry) defineUpstreamModeMetrics(registry, 'iptables');
  }

  startLoop(): void {
    this.health?.updated('IPv4');
    this.metrics?.syncQueued('IPv4');
  }

  change(): void {
    this.health?.queuedUpdate('IPv4');
    this.metrics?.syncQueued('IPv4');
  }

  async sync(healthCheckPorts: Map<string, number>, localEndpoints: Map<string, number>): Promise<void> {
    this.metrics?.syncDuration('IPv4', 0.02, 'full');
    this.metrics?.syncSucceeded('IPv4');
    this.health?.updated('IPv4');
    await this.services?.syncServices(healthCheckPorts, 'IPv4');
    await this.services?.syncEndpoints(localEndpoints, 'IPv4');
  }
}

function config(over: Partial<KubeProxyConfiguration> = {}): KubeProxyConfiguration {
  return { ...defaultConfiguration(), healthzBindAddress: '127.0.0.1:0', metricsBindAddress: '127.0.0.1:0', ...over };
}

const ALL = { healthz: true, metrics: true, serviceHealthChecks: true };

function agent(cfg: KubeProxyConfiguration, clock: FakeClock, extra: Partial<ConstructorParameters<typeof ProxyAgent>[0]> = {}) {
  return new ProxyAgent({
    config: cfg,
    mode: 'iptables',
    nodeName: 'node-1',
    dryRun: false,
    serve: ALL,
    logger: new RecordingLogger(),
    clock,
    sysctl: new FakeSysctl(),
    defaultMetrics: false,
    ...extra,
  });
}

describe('ProxyAgent with a backend', () => {
  it('serves health, metrics and health-check ports from what the backend reports', async () => {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const a = agent(config(), clock);
    const scope = rootContainer.createChildContainer();
    a.register(scope);
    await a.start();
    try {
      const proxier = new FakeProxier(scope);
      proxier.startLoop();
      const hz = a.healthzPort()!;
      expect((await httpGet(hz, '/healthz')).status).toBe(200);

      // A change that is never programmed: unhealthy after 2 × syncPeriod (60 s).
      proxier.change();
      clock.advance(healthTimeoutMs(config(), 'iptables'));
      expect((await httpGet(hz, '/healthz')).status).toBe(503);

      await proxier.sync(new Map([['default/web', 0]]), new Map([['default/web', 1]]));
      expect((await httpGet(hz, '/healthz')).status).toBe(200);
      expect(a.serviceHealth).toBeInstanceOf(ServiceHealthListeners);
      const listening = (a.serviceHealth as ServiceHealthListeners).listening();
      const svc = await httpGet(listening.get('default/web')!, '/');
      expect(svc.status).toBe(200);
      expect(JSON.parse(svc.body)).toMatchObject({ localEndpoints: 1, serviceProxyHealthy: true });

      // The Node starts being deleted: /healthz fails, /livez does not.
      a.nodeHandler.onNodeUpdate(
        { metadata: { name: 'node-1' } },
        { metadata: { name: 'node-1', deletionTimestamp: new Date() } },
      );
      expect((await httpGet(hz, '/healthz')).status).toBe(503);
      expect((await httpGet(hz, '/livez')).status).toBe(200);

      const metrics = await httpGet(a.metricsPort()!, '/metrics');
      expect(metrics.body).toContain(`kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} ${clock.now() / 1000}`);
      expect(metrics.body).toContain('kubeproxy_sync_full_proxy_rules_duration_seconds_count{ip_family="IPv4"} 1');
      expect(metrics.body).toContain('kubeproxy_proxy_healthz_total{code="503"} 2');
      expect((await httpGet(a.metricsPort()!, '/proxyMode')).body).toBe('iptables');
    } finally {
      await a.stop();
    }
    expect(a.healthzPort()).toBeUndefined();
  });

  it('lets a backend that resolves nothing run without it', () => {
    const scope = rootContainer.createChildContainer();
    const p = new FakeProxier(scope);
    expect(() => p.change()).not.toThrow();
  });

  it('disables a server with an empty bind address', async () => {
    const a = agent(config({ metricsBindAddress: '' }), new FakeClock());
    await a.start();
    try {
      expect(a.metricsPort()).toBeUndefined();
      expect(a.healthzPort()).toBeGreaterThan(0);
    } finally {
      await a.stop();
    }
  });

  it('fails start() when a port is taken and bindAddressHardFail is set', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen({ host: '127.0.0.1', port: 0 }, () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const a = agent(config({ metricsBindAddress: `127.0.0.1:${port}`, bindAddressHardFail: true }), new FakeClock());
      await expect(a.start()).rejects.toBeInstanceOf(ServerBindError);
      expect(a.healthzPort()).toBeUndefined(); // the healthz server that did bind was closed again
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });

  it('tunes the host at startup, and leaves it alone in --dry-run', async () => {
    const writes: string[] = [];
    const sysctl = new FakeSysctl({ [SYSCTL_CONNTRACK_MAX]: '65536' });
    const live = agent(config(), new FakeClock(), { sysctl, numCPU: 2, writeFile: async (p, d) => void writes.push(`${p}=${d}`) });
    await live.prepareHost();
    expect(writes).toEqual(['/proc/self/oom_score_adj=-999']);
    expect(sysctl.values.get(SYSCTL_CONNTRACK_MAX)).toBe('131072');

    const dry = new FakeSysctl({ [SYSCTL_CONNTRACK_MAX]: '65536' });
    const dryWrites: string[] = [];
    const d = agent(config(), new FakeClock(), { dryRun: true, sysctl: dry, writeFile: async (p) => void dryWrites.push(p) });
    await d.prepareHost();
    expect(dry.writes).toEqual([]);
    expect(dryWrites).toEqual([]);
  });

  it('reports failed host tuning to the Node event recorder, and nothing in --dry-run', async () => {
    const reasons: string[] = [];
    const events = { warning: (reason: string) => void reasons.push(reason) };
    const refuse = async () => {
      throw new Error('EACCES: permission denied');
    };
    const sysctl = () => new FakeSysctl({ [SYSCTL_CONNTRACK_MAX]: '65536' }).makeReadOnly(SYSCTL_CONNTRACK_MAX);
    await agent(config(), new FakeClock(), { sysctl: sysctl(), numCPU: 2, writeFile: refuse, events }).prepareHost();
    expect(reasons).toContain('FailedToApplyOOMScoreAdj');
    expect(reasons).toContain('readOnlySysFS');

    reasons.length = 0;
    await agent(config(), new FakeClock(), { dryRun: true, sysctl: sysctl(), numCPU: 2, writeFile: refuse, events }).prepareHost();
    expect(reasons).toEqual([]);
  });
});

describe('ProxyAgent readiness condition', () => {
  /** A NodeStatusClient recording the KubeProxyReady statuses written. */
  function recordingStatusClient() {
    const statuses: string[] = [];
    return {
      statuses,
      client: {
        getCondition: async () => undefined,
        patchConditions: async (_node: string, conditions: ReadonlyArray<{ status: string }>) => void statuses.push(conditions[0]!.status),
      },
    };
  }
  const settle = async () => {
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };

  it('sets KubeProxyReady after the first sync and False when /healthz fails on a late sync, True again after it', async () => {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const rec = recordingStatusClient();
    const a = agent(config(), clock, { readiness: { client: rec.client, families: ['IPv4'] } });
    const scope = rootContainer.createChildContainer();
    a.register(scope);
    let synced!: () => void;
    await a.start(new Promise<void>((r) => (synced = r)));
    try {
      const proxier = new FakeProxier(scope);
      proxier.startLoop();
      await settle();
      expect(rec.statuses).toEqual([]); // the loop has started, nothing is programmed yet
      await proxier.sync(new Map(), new Map());
      synced();
      await settle();
      expect(rec.statuses).toEqual(['True']);

      const hz = a.healthzPort()!;
      proxier.change();
      clock.advance(healthTimeoutMs(config(), 'iptables'));
      await settle();
      expect((await httpGet(hz, '/healthz')).status).toBe(503);
      expect(rec.statuses).toEqual(['True', 'False']);

      await proxier.sync(new Map(), new Map());
      clock.advance(1000);
      await settle();
      expect((await httpGet(hz, '/healthz')).status).toBe(200);
      expect(rec.statuses).toEqual(['True', 'False', 'True']);
    } finally {
      await a.stop();
    }
  });

  it('writes no condition in --dry-run, and tolerates a provider stopped before its first sync', async () => {
    const rec = recordingStatusClient();
    const a = agent(config(), new FakeClock(), { dryRun: true, readiness: { client: rec.client, families: ['IPv4'] } });
    await a.start(Promise.resolve());
    await settle();
    await a.stop();
    expect(rec.statuses).toEqual([]);

    const b = agent(config(), new FakeClock(), { readiness: { client: rec.client, families: ['IPv4'] } });
    await b.start(Promise.reject(new Error('stopped before the first sync')));
    await settle();
    await b.stop();
    expect(rec.statuses).toEqual([]);
  });
});

describe('healthTimeoutMs', () => {
  it('is 2 × the syncPeriod of the mode in use (nftables and ipvs have their own)', () => {
    const cfg = defaultConfiguration();
    const c = { ...cfg, iptables: { ...cfg.iptables, syncPeriod: '10s' }, ipvs: { ...cfg.ipvs, syncPeriod: '20s' }, nftables: { ...cfg.nftables, syncPeriod: '5s' } };
    expect(healthTimeoutMs(c, 'iptables')).toBe(20_000);
    expect(healthTimeoutMs(c, 'ipvs')).toBe(40_000);
    expect(healthTimeoutMs(c, 'nftables')).toBe(10_000);
    expect(healthTimeoutMs(c, 'my-plugin')).toBe(20_000);
  });
});
