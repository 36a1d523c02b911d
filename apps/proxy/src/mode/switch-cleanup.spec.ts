import { BACKEND_PLUGIN_API_VERSION, RecordingLogger, testContext, type BackendPlugin } from '@kube-proxy/core';
import { container } from 'tsyringe';
import { BackendRegistry } from '../registry/backend-registry.js';
import { cleanupOtherModes, modesToClean } from './switch-cleanup.js';

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

function setup(failing: string[] = []) {
  const calls: string[] = [];
  const registry = new BackendRegistry();
  for (const name of ['iptables', 'ipvs', 'nftables', 'userspace']) registry.register(backend(name, calls, failing.includes(name)), 'builtin');
  return { calls, registry };
}

describe('switching proxy modes (upstream platformCleanup)', () => {
  it('nftables removes the iptables-based modes\' leftovers, and they remove the nftables tables', () => {
    expect(modesToClean('nftables')).toEqual(['iptables', 'ipvs']);
    expect(modesToClean('iptables')).toEqual(['nftables']);
    expect(modesToClean('ipvs')).toEqual(['nftables']);
    expect(modesToClean('userspace')).toEqual([]);
    expect(modesToClean('my-plugin')).toEqual([]);
  });

  it('runs the other modes\' cleanup at start', async () => {
    const { calls, registry } = setup();
    await cleanupOtherModes(registry.get('nftables')!, registry, container.createChildContainer(), testContext({ dryRun: false }), new RecordingLogger());
    expect(calls).toEqual(['iptables', 'ipvs']);
  });

  it('never in --dry-run', async () => {
    const { calls, registry } = setup();
    await cleanupOtherModes(registry.get('iptables')!, registry, container.createChildContainer(), testContext({ dryRun: true }), new RecordingLogger());
    expect(calls).toEqual([]);
  });

  it('a failing cleanup is logged and does not stop the start', async () => {
    const { calls, registry } = setup(['iptables']);
    const logger = new RecordingLogger();
    await cleanupOtherModes(registry.get('nftables')!, registry, container.createChildContainer(), testContext({ dryRun: false }), logger);
    expect(calls).toEqual(['iptables', 'ipvs']);
    expect(logger.entries.some((e) => e.level === 'error' && e.meta['mode'] === 'iptables')).toBe(true);
  });
});
