import { BACKEND_PLUGIN_API_VERSION, type BackendPlugin, type ProxyContext } from '@kube-proxy/core';
import { container } from 'tsyringe';
import { BackendRegistry, PluginContractError } from './backend-registry.js';

function plugin(overrides: Partial<Record<keyof BackendPlugin, unknown>> = {}): Record<string, unknown> {
  return {
    apiVersion: BACKEND_PLUGIN_API_VERSION,
    name: 'echo',
    version: '0.1.0',
    detect: () => ({ usable: true, reason: 'test' }),
    register: () => undefined,
    ...overrides,
  };
}

const context = {} as ProxyContext;

describe('BackendRegistry refusals', () => {
  it('refuses a plugin written for another contract version, naming the module and both versions', () => {
    const r = new BackendRegistry();
    expect(() => r.register(plugin({ apiVersion: 'kube-proxy.backend/v9' }), '--backend-plugin=kube-proxy-echo-backend')).toThrow(
      new PluginContractError(
        '--backend-plugin=kube-proxy-echo-backend: unsupported backend plugin apiVersion "kube-proxy.backend/v9"; this kube-proxy supports "kube-proxy.backend/v1"',
      ),
    );
    expect(r.names()).toEqual([]);
  });

  it('turns a throwing register() into a refusal that names the module and the backend, keeping the cause', async () => {
    const r = new BackendRegistry();
    const boom = new Error('no datapath here');
    const registered = r.register(plugin({ register: () => { throw boom; } }), '--backend-plugin=my-backend');
    const err = await Promise.resolve(registered.register(container.createChildContainer(), context)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PluginContractError);
    expect((err as Error).message).toBe('--backend-plugin=my-backend: backend plugin "echo" failed in register(): no datapath here');
    expect((err as Error).cause).toBe(boom);
    // An async register() that rejects is refused the same way.
    const r2 = new BackendRegistry();
    const rejecting = r2.register(plugin({ register: async () => Promise.reject(new Error('later')) }), 'p');
    await expect(rejecting.register(container.createChildContainer(), context)).rejects.toThrow('p: backend plugin "echo" failed in register(): later');
  });

  it('calls the plugin\'s methods on the plugin itself, so a class-based plugin keeps its state', async () => {
    class ClassPlugin {
      readonly apiVersion = BACKEND_PLUGIN_API_VERSION;
      readonly name = 'classy';
      readonly version = '1.0.0';
      readonly calls: string[] = [];
      #secret = 'kept';
      detect() {
        this.calls.push('detect');
        return { usable: true, reason: this.#secret };
      }
      register() {
        this.calls.push(`register:${this.#secret}`);
      }
      async cleanup() {
        this.calls.push('cleanup');
      }
    }
    const original = new ClassPlugin();
    const registered = new BackendRegistry().register(original, 'class');
    expect(await registered.detect({} as never)).toEqual({ usable: true, reason: 'kept' });
    await registered.register(container.createChildContainer(), context);
    await registered.cleanup?.(container.createChildContainer(), context);
    expect(original.calls).toEqual(['detect', 'register:kept', 'cleanup']);
  });

  it('leaves cleanup absent when the plugin has none', () => {
    expect(new BackendRegistry().register(plugin(), 'p').cleanup).toBeUndefined();
  });
});

describe('BackendRegistry and tracers', () => {
  const tracer = { mode: 'echo', readLive: () => undefined, fromDryRun: () => undefined, trace: () => undefined, objectsOf: () => [] };

  it("keeps a plugin's tracer (trace, explain and /debug use it) and leaves it absent when there is none", () => {
    expect(new BackendRegistry().register(plugin({ tracer }), 'p').tracer).toBe(tracer);
    expect(new BackendRegistry().register(plugin(), 'p').tracer).toBeUndefined();
  });

  it('refuses a tracer without the contract methods, naming them', () => {
    expect(() => new BackendRegistry().register(plugin({ tracer: { mode: 'echo', trace: () => undefined } }), 'p')).toThrow(
      new PluginContractError('p: backend plugin "echo" tracer must have readLive(), fromDryRun(), objectsOf()'),
    );
    expect(() => new BackendRegistry().register(plugin({ tracer: 'yes' }), 'p')).toThrow(/tracer must have readLive\(\), fromDryRun\(\), trace\(\), objectsOf\(\)/);
  });
});
