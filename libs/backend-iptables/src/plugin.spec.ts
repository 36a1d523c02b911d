import { readFileSync } from 'node:fs';
import type { Provider } from '@kube-proxy/core';
import { BACKEND_PLUGIN_API_VERSION, CLOCK, COMMAND_EXECUTOR, DualStackProvider, LOGGER, PROVIDER, PROXIER_HEALTH_UPDATER, ProxierHealthTracker, SYSCTL } from '@kube-proxy/core';
import { FakeClock, FakeCommandExecutor, FakeSysctl, fakeContainer, RecordingLogger } from '@kube-proxy/core/testing';
import defaultExport, { iptablesBackend } from './index.js';
import { IptablesProxier } from './proxier/iptables-proxier.js';
import { context, HOST, service, settle, slice } from './proxier/testing/proxier-fixtures.js';

function fakeIptablesContainer(executor = new FakeCommandExecutor()) {
  const { container, values } = fakeContainer([
    [LOGGER, new RecordingLogger()],
    [CLOCK, new FakeClock()],
    [COMMAND_EXECUTOR, executor],
    [SYSCTL, new FakeSysctl()],
  ]);
  return { container, values, executor };
}

describe('iptablesBackend', () => {
  it('is the default export and declares the contract version, name and package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(defaultExport).toBe(iptablesBackend);
    expect(iptablesBackend.apiVersion).toBe(BACKEND_PLUGIN_API_VERSION);
    expect(iptablesBackend.name).toBe('iptables');
    expect(iptablesBackend.version).toBe(pkg.version);
  });

  it('detect: usable when an iptables binary exists, naming variant and version', async () => {
    const ok = await iptablesBackend.detect(HOST);
    expect(ok.usable).toBe(true);
    expect(ok.reason).toContain('1.8.9');
    expect(ok.reason).toContain('nft');
    const none = await iptablesBackend.detect({
      ...HOST,
      tools: { ...HOST.tools, iptables: { present: false } },
      iptablesVariant: undefined,
      iptablesVariantReason: 'no iptables binary in PATH',
    });
    expect(none.usable).toBe(false);
    expect(none.reason).toContain('no iptables binary');
  });

  it('register: one family → an IptablesProxier under PROVIDER', async () => {
    const { container, values } = fakeIptablesContainer();
    await iptablesBackend.register(container, context({ dryRun: false }));
    expect(values.get(PROVIDER)).toBeInstanceOf(IptablesProxier);
  });

  it('register: no iptables binary is an error outside dry-run, fine in dry-run', async () => {
    const host = { ...HOST, iptablesVariant: undefined };
    const { container, values } = fakeIptablesContainer();
    expect(() => iptablesBackend.register(container, context({ dryRun: false, host }))).toThrow(/no usable iptables/);
    await iptablesBackend.register(container, context({ dryRun: true, host }));
    expect(values.get(PROVIDER)).toBeInstanceOf(IptablesProxier);
  });

  it('register: two families → a DualStackProvider fanning events out; dry-run output tags the family', async () => {
    const ctx = context({ families: ['IPv4', 'IPv6'], config: { clusterCIDR: '10.244.0.0/16,fd00:244::/56' } });
    const { container, values } = fakeIptablesContainer();
    await iptablesBackend.register(container, ctx);
    const provider = values.get(PROVIDER) as Provider;
    expect(provider).toBeInstanceOf(DualStackProvider);
    const [v4, v6] = (provider as DualStackProvider).providers as [IptablesProxier, IptablesProxier];
    expect([v4.family, v6.family]).toEqual(['IPv4', 'IPv6']);

    const ports = [{ name: 'http', port: 80, protocol: 'TCP' as const, targetPort: 8080 }];
    const loop = provider.syncLoop();
    provider.onServiceAdd(service('ns', 'web4', '10.96.0.10', ports));
    provider.onServiceAdd(service('ns', 'web6', 'fd00:96::10', ports));
    provider.onEndpointSliceAdd(slice('ns', 'web4', 'web4-1', ports, ['10.244.1.11']));
    provider.onEndpointSliceAdd(slice('ns', 'web6', 'web6-1', ports, ['fd00:244::11']));
    provider.onServicesSynced();
    provider.onEndpointSlicesSynced();
    await settle();
    await expect(provider.firstSync()).resolves.toBeUndefined();
    expect(v4.state.serviceMap.size).toBe(1);
    expect(v6.state.serviceMap.size).toBe(1);
    const out = ctx.dryRunSink.text;
    expect(out).toMatch(/^# sync 1 full \S+ IPv4\n/m);
    expect(out).toMatch(/^# sync 1 full \S+ IPv6\n/m);
    expect(out).toContain('-d fd00:96::10');
    provider.stop();
    await loop;
  });

  it('register: hands the agent parts registered in the container to the proxiers (per family)', async () => {
    const ctx = context({ families: ['IPv4', 'IPv6'], config: { clusterCIDR: '10.244.0.0/16,fd00:244::/56' } });
    const { container, values } = fakeIptablesContainer();
    const health = new ProxierHealthTracker(values.get(CLOCK) as FakeClock, 60_000);
    values.set(PROXIER_HEALTH_UPDATER, health);
    await iptablesBackend.register(container, ctx);
    const provider = values.get(PROVIDER) as Provider;
    const loop = provider.syncLoop();
    expect(Object.keys(health.health().status).sort()).toEqual(['IPv4', 'IPv6']);
    provider.stop();
    await loop;
  });

  it('cleanup: removes rules of every variant present, and nothing in dry-run', async () => {
    const exec = new FakeCommandExecutor()
      .on({ command: 'iptables-nft', args: ['--version'] }, { stdout: 'iptables v1.8.9 (nf_tables)\n' })
      .on({ command: 'iptables-nft-save' }, { stdout: '' });
    const { container } = fakeIptablesContainer(exec);
    const cleanup = iptablesBackend.cleanup?.bind(iptablesBackend);
    if (!cleanup) throw new Error('cleanup missing');
    await cleanup(container, context({ dryRun: true }));
    expect(exec.calls).toHaveLength(0);
    await cleanup(container, context({ dryRun: false }));
    expect(exec.commandLines()).toEqual([
      'iptables-nft --version',
      'iptables-nft-save -t filter',
      'iptables-nft-save -t nat',
      'iptables-nft-save -t mangle',
      'ip6tables-nft --version',
      'iptables-legacy --version',
      'ip6tables-legacy --version',
    ]);
  });
});
