import { BACKEND_PLUGIN_API_VERSION, CLOCK, COMMAND_EXECUTOR, DualStackProvider, LOGGER, PROVIDER, systemClock, type Provider } from '@kube-proxy/core';
import { fakeContainer, FakeCommandExecutor, RecordingLogger } from '@kube-proxy/core/testing';
import { userspaceBackend } from './plugin.js';
import { UserspaceProxier } from './proxier/userspace-proxier.js';
import { context } from './testing/proxier-fixtures.js';

describe('userspace backend plugin', () => {
  it('speaks the current plugin contract under the mode name "userspace"', async () => {
    expect(userspaceBackend.apiVersion).toBe(BACKEND_PLUGIN_API_VERSION);
    expect(userspaceBackend.name).toBe('userspace');
    expect(userspaceBackend.version).toMatch(/^\d+\.\d+\.\d+/);
    expect((await userspaceBackend.detect(context().host)).usable).toBe(true);
  });

  it('register() puts a userspace Provider in the container', () => {
    const { container } = fakeContainer([
      [LOGGER, new RecordingLogger()],
      [CLOCK, systemClock],
      [COMMAND_EXECUTOR, new FakeCommandExecutor()],
    ]);
    userspaceBackend.register(container, context({ dryRun: true }));
    const provider = container.resolve<Provider>(PROVIDER);
    expect(provider).toBeInstanceOf(UserspaceProxier);
    provider.stop();
  });

  const ports = (logger: RecordingLogger, uid: number) => ({ logger, clock: systemClock, executor: new FakeCommandExecutor(), observers: {}, uid });

  it('two families → one proxier each behind a DualStackProvider', () => {
    const provider = userspaceBackend.createProvider(ports(new RecordingLogger(), 0), context({ dryRun: true, families: ['IPv4', 'IPv6'] }));
    expect(provider).toBeInstanceOf(DualStackProvider);
    expect((provider as DualStackProvider).providers.map((p) => (p as UserspaceProxier).family)).toEqual(['IPv4', 'IPv6']);
    provider.stop();
  });

  it('says clearly when capture rules cannot be installed (not root, no iptables), and still builds', () => {
    const notRoot = new RecordingLogger();
    userspaceBackend.createProvider(ports(notRoot, 1000), context()).stop();
    expect(notRoot.entries.filter((e) => e.level === 'warn').map((e) => e.message)).toEqual([
      expect.stringMatching(/^Capture rules are NOT installed \(not running as root\): Services are not reachable on their cluster IPs/),
    ]);

    const noIptables = new RecordingLogger();
    const host = { ...context().host, iptablesVariant: undefined, iptablesVariantReason: 'iptables not found' };
    userspaceBackend.createProvider(ports(noIptables, 0), context({ host })).stop();
    expect(noIptables.entries.map((e) => e.message)).toContainEqual(expect.stringMatching(/NOT installed \(no usable iptables: iptables not found\)/));

    const root = new RecordingLogger();
    userspaceBackend.createProvider(ports(root, 0), context()).stop();
    expect(root.entries.filter((e) => e.level === 'warn')).toEqual([]);
  });
});
