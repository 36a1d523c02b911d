import { readFileSync } from 'node:fs';
import type { DependencyContainer } from 'tsyringe';
import { BACKEND_PLUGIN_API_VERSION, type BackendPlugin } from '../contracts/backend-plugin.js';
import { PROVIDER, type Provider } from '../contracts/provider.js';
import type { ProxyContext } from '../contracts/proxy-context.js';
import type { ModeTracer } from '../contracts/packet-trace.js';
import type { IPFamily } from '../semantics/model/protocol.js';
import { COMMAND_EXECUTOR, type CommandExecutor } from '../host/command-executor.js';
import { LOGGER, type Logger } from '../host/logger.js';
import { resolveBackendPorts, type BackendPorts } from './backend-ports.js';
import { DualStackProvider } from './dual-stack-provider.js';
import { resolveOptional } from './observers.js';
import { METRICS_REGISTRY, type MetricsRegistry } from '../observers/metrics/metrics-registry.js';

/** What one family's proxier is built from. */
export interface BackendRun<P, S> {
  readonly ports: P;
  readonly context: ProxyContext;
  /** What `prepare` built once for the run (shared by both families' proxiers). */
  readonly shared: S;
  /** Two proxiers share the dry-run output: each tags its blocks with its family. */
  readonly tagDryRunOutput: boolean;
}

/** A backend as its author describes it; `defineBackend` adds what every plugin repeats. */
export interface BackendDefinition<P, S> {
  /** The --proxy-mode name. */
  readonly name: string;
  /** The package's package.json (e.g. `new URL('../package.json', import.meta.url)` from src/ or dist/): its version is the plugin's. */
  readonly packageJson: URL;
  readonly detect: BackendPlugin['detect'];
  /** The ports this backend needs from the host's container (default: core's BackendPorts). */
  readonly resolvePorts?: (container: DependencyContainer, name: string) => P;
  /** Built once per run before the proxiers, e.g. one kernel for both families (default: nothing). */
  readonly prepare?: (ports: P, context: ProxyContext) => S;
  /** The single-family Provider for `family`. */
  readonly createProxier: (family: IPFamily, run: BackendRun<P, S>) => Provider;
  /**
   * --cleanup: removes everything this mode may have programmed; resolves true when it encountered an
   * error. Never called in --dry-run, which changes nothing on the host.
   */
  readonly cleanup?: (ports: CleanupPorts, context: ProxyContext) => Promise<boolean>;
  /** What --cleanup removes, in words (`Dry run: not removing <what>`). */
  readonly cleanupSubject?: string;
  /**
   * Defines the mode's own metrics in the host's registry before the proxiers are built, as
   * upstream's RegisterMetrics(mode) (skipped when the host collects no metrics).
   */
  readonly metrics?: (registry: MetricsRegistry) => void;
  /** Answers `kube-proxy trace` / `explain` over this mode's rules (see ModeTracer). */
  readonly tracer?: ModeTracer;
}

/** What --cleanup needs from the host's container (a cleanup-only run registers no more). */
export interface CleanupPorts {
  /** The host app's logger, as a child tagged `backend: NAME`. */
  readonly logger: Logger;
  readonly executor: CommandExecutor;
}

/** A BackendPlugin with the factory it registers (benchmarks and specs build providers with it too). */
export interface DefinedBackend<P> extends BackendPlugin {
  /** One proxier per family of the run, a DualStackProvider over two. */
  createProvider(ports: P, context: ProxyContext): Provider;
}

/** The `version` of a package.json, or 0.0.0 when it cannot be read. */
export function packageVersionOf(packageJson: URL): string {
  try {
    const pkg = JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * A backend plugin from its definition: the contract version, the package version, the check that
 * the run has one or two IP families, one proxier per family behind a DualStackProvider, PROVIDER
 * registered, and --cleanup refused in --dry-run (logged) or turned into an error when it failed.
 */
export function defineBackend<P = BackendPorts, S = undefined>(definition: BackendDefinition<P, S>): DefinedBackend<P> {
  const { name } = definition;
  const resolvePorts = definition.resolvePorts ?? ((container: DependencyContainer) => resolveBackendPorts(container, name) as P);
  const createProvider = (ports: P, context: ProxyContext): Provider => {
    const families = context.families;
    if (families.length === 0 || families.length > 2) {
      throw new Error(`${name} backend: expected one or two IP families, got ${JSON.stringify(families)}`);
    }
    const shared = definition.prepare ? definition.prepare(ports, context) : (undefined as S);
    const run: BackendRun<P, S> = { ports, context, shared, tagDryRunOutput: families.length > 1 };
    const [first, second] = families as [IPFamily, IPFamily | undefined];
    const firstProxier = definition.createProxier(first, run);
    return second === undefined ? firstProxier : new DualStackProvider(firstProxier, definition.createProxier(second, run));
  };
  const plugin: DefinedBackend<P> = {
    apiVersion: BACKEND_PLUGIN_API_VERSION,
    name,
    version: packageVersionOf(definition.packageJson),
    detect: definition.detect,
    createProvider,
    ...(definition.tracer ? { tracer: definition.tracer } : {}),
    register(container: DependencyContainer, context: ProxyContext): void {
      const registry = definition.metrics ? resolveOptional<MetricsRegistry>(container, METRICS_REGISTRY) : undefined;
      if (registry) definition.metrics?.(registry);
      container.register<Provider>(PROVIDER, { useValue: createProvider(resolvePorts(container, name), context) });
    },
  };
  const cleanup = definition.cleanup;
  if (cleanup) {
    plugin.cleanup = async (container: DependencyContainer, context: ProxyContext): Promise<void> => {
      const logger = container.resolve<Logger>(LOGGER).child({ backend: name });
      if (context.dryRun) {
        logger.info(`Dry run: not removing ${definition.cleanupSubject ?? `${name} rules`}`);
        return;
      }
      const executor = container.resolve<CommandExecutor>(COMMAND_EXECUTOR);
      if (await cleanup({ logger, executor }, context)) throw new Error(`${name} backend: encountered an error while cleaning up`);
    };
  }
  return plugin;
}
