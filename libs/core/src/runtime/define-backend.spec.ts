import type { Provider } from '../contracts/provider.js';
import { PROVIDER } from '../contracts/provider.js';
import { BACKEND_PLUGIN_API_VERSION } from '../contracts/backend-plugin.js';
import { COMMAND_EXECUTOR } from '../host/command-executor.js';
import { LOGGER } from '../host/logger.js';
import { fakeContainer } from '../testing/fake-container.js';
import { FakeCommandExecutor, RecordingLogger } from '../testing/host-fakes.js';
import { testContext } from '../testing/test-context.js';
import type { IPFamily } from '../semantics/model/protocol.js';
import { defineBackend } from './define-backend.js';
import { DualStackProvider } from './dual-stack-provider.js';

/** A provider that only remembers its family (what defineBackend builds per family). */
function familyProvider(family: IPFamily): Provider & { family: IPFamily } {
  const noop = (): void => undefined;
  return {
    family,
    sync: noop,
    syncLoop: async () => undefined,
    stop: noop,
    firstSync: async () => undefined,
    onServiceAdd: noop,
    onServiceUpdate: noop,
    onServiceDelete: noop,
    onServicesSynced: noop,
    onEndpointSliceAdd: noop,
    onEndpointSliceUpdate: noop,
    onEndpointSliceDelete: noop,
    onEndpointSlicesSynced: noop,
    onNodeAdd: noop,
    onNodeUpdate: noop,
    onNodeDelete: noop,
    onNodeSynced: noop,
  };
}

function backend(cleanupResult = false) {
  const built: Array<{ family: IPFamily; shared: string; tag: boolean }> = [];
  const cleaned: string[] = [];
  const plugin = defineBackend<{ name: string }, string>({
    name: 'demo',
    packageJson: new URL('../../package.json', import.meta.url),
    detect: () => ({ usable: true, reason: 'always' }),
    resolvePorts: (_container, name) => ({ name }),
    prepare: (ports) => `shared by ${ports.name}`,
    createProxier(family, run) {
      built.push({ family, shared: run.shared, tag: run.tagDryRunOutput });
      return familyProvider(family);
    },
    cleanup: async (ports) => {
      cleaned.push(ports.executor === undefined ? 'no executor' : 'executor');
      return cleanupResult;
    },
    cleanupSubject: 'demo rules',
  });
  return { plugin, built, cleaned };
}

describe('defineBackend', () => {
  it('is a v1 plugin carrying its package version', () => {
    const { plugin } = backend();
    expect(plugin.apiVersion).toBe(BACKEND_PLUGIN_API_VERSION);
    expect(plugin.name).toBe('demo');
    expect(plugin.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(plugin.version).not.toBe('0.0.0');
  });

  it('registers one proxier for one family, and a DualStackProvider over two sharing what prepare built', async () => {
    const single = backend();
    const one = fakeContainer();
    await single.plugin.register(one.container, testContext({ families: ['IPv6'] }));
    expect((one.values.get(PROVIDER) as { family: string }).family).toBe('IPv6');
    expect(single.built).toEqual([{ family: 'IPv6', shared: 'shared by demo', tag: false }]);

    const dual = backend();
    const two = fakeContainer();
    await dual.plugin.register(two.container, testContext({ families: ['IPv4', 'IPv6'] }));
    expect(two.values.get(PROVIDER)).toBeInstanceOf(DualStackProvider);
    expect(dual.built.map((b) => [b.family, b.tag])).toEqual([
      ['IPv4', true],
      ['IPv6', true],
    ]);
  });

  it('refuses a run with no IP family, naming the backend', () => {
    const { plugin } = backend();
    expect(() => plugin.createProvider({ name: 'demo' }, testContext({ families: [] }))).toThrow('demo backend: expected one or two IP families, got []');
  });

  it('--cleanup: not in --dry-run (logged), an error becomes a thrown error naming the backend', async () => {
    const logger = new RecordingLogger();
    const entries = [
      [LOGGER, logger],
      [COMMAND_EXECUTOR, new FakeCommandExecutor()],
    ] as const;
    const quiet = backend();
    await quiet.plugin.cleanup!(fakeContainer(entries).container, testContext({ dryRun: true }));
    expect(quiet.cleaned).toEqual([]);
    expect(logger.entries.some((e) => e.message === 'Dry run: not removing demo rules')).toBe(true);
    await quiet.plugin.cleanup!(fakeContainer(entries).container, testContext());
    expect(quiet.cleaned).toEqual(['executor']);
    const failing = backend(true);
    await expect(failing.plugin.cleanup!(fakeContainer(entries).container, testContext())).rejects.toThrow('demo backend: encountered an error while cleaning up');
  });
});
