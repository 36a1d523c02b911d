import { BACKEND_PLUGIN_API_VERSION, type BackendPlugin } from '@kube-proxy/core';
import { RecordingLogger, testContext } from '@kube-proxy/core/testing';
import { container } from 'tsyringe';
import { BackendRegistry } from '../registry/backend-registry.js';
import { cleanupOtherModes, modesToClean, type SwitchCleanupOptions } from './switch-cleanup.js';

function backend(name: string, calls: string[], fail = false): BackendPlugin {
  return {
    apiVersion: BACKEND_PLUGIN_API_VERSION,
    name,
    version: '1.0.0',
    detect: () => ({ usable: true, reason: '' }),
    register: () => undefined,
    cleanup: async () => {
      calls.push(name);
      if (fail) throw new Error(`${name} cleanup failed`);
    },
  };
}

function setup(mode: string, options: { failing?: string[]; dryRun?: boolean; firstSync?: Promise<void> } = {}) {
  const calls: string[] = [];
  const registry = new BackendRegistry();
  for (const name of ['iptables', 'ipvs', 'nftables', 'userspace']) registry.register(backend(name, calls, options.failing?.includes(name)), 'builtin');
  const logger = new RecordingLogger();
  const switchOptions: SwitchCleanupOptions = {
    plugin: registry.get(mode)!,
    registry,
    scope: container.createChildContainer(),
    context: testContext({ dryRun: options.dryRun ?? false }),
    logger,
    firstSync: options.firstSync ?? Promise.resolve(),
  };
  return { calls, logger, switchOptions };
}

/** Lets every already-settled promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('switching proxy modes (upstream platformCleanup, after the first sync)', () => {
  it('nftables removes the iptables-based modes\' leftovers, and they remove the nftables tables', () => {
    expect(modesToClean('nftables')).toEqual(['iptables', 'ipvs']);
    expect(modesToClean('iptables')).toEqual(['nftables']);
    expect(modesToClean('ipvs')).toEqual(['nftables']);
    expect(modesToClean('userspace')).toEqual([]);
    expect(modesToClean('my-plugin')).toEqual([]);
  });

  it('removes nothing until the starting mode has synced once, then the other modes\' leftovers', async () => {
    let synced!: () => void;
    const firstSync = new Promise<void>((resolve) => (synced = resolve));
    const { calls, switchOptions } = setup('nftables', { firstSync });
    const done = cleanupOtherModes(switchOptions);
    await settle();
    // The old mode's rules are all the node has until the new mode's first sync.
    expect(calls).toEqual([]);
    synced();
    await done;
    expect(calls).toEqual(['iptables', 'ipvs']);
  });

  it('a proxy stopped before its first sync leaves the other modes\' rules in place', async () => {
    const { calls, switchOptions } = setup('iptables', { firstSync: Promise.reject(new Error('stopped before the first sync')) });
    await cleanupOtherModes(switchOptions);
    expect(calls).toEqual([]);
  });

  it('never in --dry-run', async () => {
    const { calls, switchOptions } = setup('iptables', { dryRun: true });
    await cleanupOtherModes(switchOptions);
    expect(calls).toEqual([]);
  });

  it('a failing cleanup is logged and does not stop the others', async () => {
    const { calls, logger, switchOptions } = setup('nftables', { failing: ['iptables'] });
    await cleanupOtherModes(switchOptions);
    expect(calls).toEqual(['iptables', 'ipvs']);
    expect(logger.entries.some((e) => e.level === 'error' && e.meta['mode'] === 'iptables')).toBe(true);
  });
});
