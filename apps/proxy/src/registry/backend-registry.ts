import { BACKEND_PLUGIN_API_VERSION, type BackendPlugin } from '@kube-proxy/core';

/** Raised when a plugin object does not honour the backend contract. */
export class PluginContractError extends Error {}

/**
 * The set of proxy modes this process can run. Backends are added explicitly by the composition root
 * (built-ins first, then --backend-plugin modules); nothing registers itself on import.
 */
export class BackendRegistry {
  private readonly backends = new Map<string, BackendPlugin>();

  register(plugin: unknown, origin: string): BackendPlugin {
    const checked = guardRegister(checkPluginShape(plugin, origin), origin);
    const existing = this.backends.get(checked.name);
    if (existing) {
      throw new PluginContractError(
        `${origin}: a backend named "${checked.name}" is already registered (version ${existing.version})`,
      );
    }
    this.backends.set(checked.name, checked);
    return checked;
  }

  get(name: string): BackendPlugin | undefined {
    return this.backends.get(name);
  }

  names(): string[] {
    return [...this.backends.keys()].sort();
  }

  all(): BackendPlugin[] {
    return [...this.backends.values()];
  }
}

/**
 * The plugin as the rest of the app sees it: a register() that throws is refused with the module and
 * the backend named (the run then exits 1 before the host is touched), not reported as a crash of
 * kube-proxy. The original error stays as `cause`. Methods are called on the plugin object itself, so
 * a plugin written as a class keeps its `this`.
 */
function guardRegister(plugin: BackendPlugin, origin: string): BackendPlugin {
  const { cleanup, tracer } = plugin;
  return {
    apiVersion: plugin.apiVersion,
    name: plugin.name,
    version: plugin.version,
    detect: (host, config) => plugin.detect(host, config),
    register: async (container, context) => {
      try {
        await plugin.register(container, context);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw new PluginContractError(`${origin}: backend plugin "${plugin.name}" failed in register(): ${why}`, { cause: err });
      }
    },
    ...(cleanup ? { cleanup: (container, context) => cleanup.call(plugin, container, context) } : {}),
    // `trace` / `explain` and /debug use the mode's tracer (core 0.3.0); a plugin without one is not traceable.
    ...(tracer ? { tracer } : {}),
  };
}

function checkPluginShape(value: unknown, origin: string): BackendPlugin {
  if (typeof value !== 'object' || value === null) {
    throw new PluginContractError(`${origin}: does not export a backend plugin object`);
  }
  const p = value as Record<string, unknown>;
  if (p['apiVersion'] !== BACKEND_PLUGIN_API_VERSION) {
    throw new PluginContractError(
      `${origin}: unsupported backend plugin apiVersion ${JSON.stringify(p['apiVersion'])}; ` +
        `this kube-proxy supports "${BACKEND_PLUGIN_API_VERSION}"`,
    );
  }
  for (const field of ['name', 'version'] as const) {
    if (typeof p[field] !== 'string' || p[field] === '') {
      throw new PluginContractError(`${origin}: backend plugin field "${field}" must be a non-empty string`);
    }
  }
  if (!/^[a-z0-9][a-z0-9-]*$/.test(p['name'] as string)) {
    throw new PluginContractError(`${origin}: backend plugin name ${JSON.stringify(p['name'])} must match [a-z0-9-]+`);
  }
  for (const fn of ['detect', 'register'] as const) {
    if (typeof p[fn] !== 'function') {
      throw new PluginContractError(`${origin}: backend plugin "${String(p['name'])}" has no ${fn}() function`);
    }
  }
  if (p['cleanup'] !== undefined && typeof p['cleanup'] !== 'function') {
    throw new PluginContractError(`${origin}: backend plugin "${String(p['name'])}" cleanup must be a function`);
  }
  checkTracerShape(p, origin);
  return value as BackendPlugin;
}

const TRACER_METHODS = ['readLive', 'fromDryRun', 'trace', 'objectsOf'] as const;

function checkTracerShape(p: Record<string, unknown>, origin: string): void {
  const tracer = p['tracer'];
  if (tracer === undefined) return;
  const t = tracer as Record<string, unknown> | null;
  const missing = typeof t === 'object' && t !== null ? TRACER_METHODS.filter((m) => typeof t[m] !== 'function') : TRACER_METHODS;
  if (missing.length > 0) {
    throw new PluginContractError(`${origin}: backend plugin "${String(p['name'])}" tracer must have ${missing.map((m) => `${m}()`).join(', ')}`);
  }
}
