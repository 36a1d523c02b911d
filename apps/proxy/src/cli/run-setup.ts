/**
 * The first steps every run shares — the proxy itself, `--dry-run`, and `kube-proxy trace` /
 * `explain` (which render the same rules into a buffer): the host's capabilities, the registered
 * backends, the DI container, the node's name; then the objects' source, the Node and the families.
 */
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import {
  CLOCK,
  COMMAND_EXECUTOR,
  ExecaCommandExecutor,
  HOST_FS,
  LOGGER,
  NodeHostFs,
  ProcSysctl,
  SYSCTL,
  systemClock,
  type CommandExecutor,
  type HostCapabilities,
  type IPFamily,
  type KubeProxyConfiguration,
  type Logger,
  type ParsedFlags,
  type V1Node,
} from '@kube-proxy/core';
import { BUILTIN_BACKENDS } from '../registry/builtin-backends.js';
import { BackendRegistry } from '../registry/backend-registry.js';
import { loadPluginModule } from '../registry/load-plugin.js';
import { ObjectValidation } from '../sources/validating-handlers.js';
import { resolveNodeIPs, resolveNodeName } from '../node/node-identity.js';
import { proxiedFamilies } from '../node/families.js';
import { detectHost } from './detect-host.js';
import { DryRunGuardExecutor } from './dry-run-guard.js';
import { openSource, type OpenedSource } from './open-source.js';

/** What a run knows before it reads any object. */
export interface RunHost {
  /** The real executor (refusing writes in --dry-run). */
  readonly executor: CommandExecutor;
  readonly host: HostCapabilities;
  readonly registry: BackendRegistry;
  /** Holds LOGGER, CLOCK, COMMAND_EXECUTOR, SYSCTL and HOST_FS. */
  readonly base: DependencyContainer;
  readonly nodeName: string;
}

export async function openRunHost(options: ParsedFlags['options'], config: KubeProxyConfiguration, logger: Logger): Promise<RunHost> {
  const realExecutor = new ExecaCommandExecutor();
  const executor: CommandExecutor = options.dryRun ? new DryRunGuardExecutor(realExecutor) : realExecutor;
  const hostFs = new NodeHostFs();
  const host = await detectHost(hostFs, executor, logger);
  logger.verbose('Host capabilities', { host });

  const registry = await loadBackends(config, logger);
  const base = rootContainer.createChildContainer();
  base.register(LOGGER, { useValue: logger });
  base.register(CLOCK, { useValue: systemClock });
  base.register(COMMAND_EXECUTOR, { useValue: executor });
  base.register(SYSCTL, { useValue: new ProcSysctl() });
  base.register(HOST_FS, { useValue: hostFs });
  return { executor, host, registry, base, nodeName: resolveNodeName(config.hostnameOverride) };
}

/** The built-in backends and those of --backend-plugin (config.backendPlugins), loaded in order. */
export async function loadBackends(config: KubeProxyConfiguration, logger: Logger): Promise<BackendRegistry> {
  const registry = new BackendRegistry();
  for (const b of BUILTIN_BACKENDS) registry.register(b, `built-in backend ${b.name}`);
  for (const spec of config.backendPlugins) {
    const plugin = registry.register(await loadPluginModule(spec), `--backend-plugin=${spec}`);
    logger.info('Loaded backend plugin', { module: spec, mode: plugin.name, version: plugin.version });
  }
  return registry;
}

/** The source (loaded), the validated Node and what follows from it. */
export interface RunObjects extends OpenedSource {
  readonly validation: ObjectValidation;
  /** The proxy's own Node, when the source has it (validated). */
  readonly node: V1Node | undefined;
  readonly nodeIPs: Partial<Record<IPFamily, string>>;
  readonly families: IPFamily[];
}

/** A source being opened (its initial lists loading), with the validation its objects pass. */
export interface PendingObjects {
  readonly validation: ObjectValidation;
  readonly opened: Promise<OpenedSource>;
}

/**
 * Starts opening the source. The proxy does this before probing the host: the probes are child
 * processes and the lists are the API server's work or file reads, so on a multi-core node they
 * overlap, and at 10k Services the lists are the longer part of a cold start.
 */
export function startRunObjects(options: ParsedFlags['options'], config: KubeProxyConfiguration, logger: Logger): PendingObjects {
  // Every source's objects pass validation at the edge before anything uses them (the node IPs, the
  // Provider): what the API server would refuse is skipped, logged and counted.
  const validation = new ObjectValidation(logger.child({ component: 'validation' }));
  const opened = openSource(options, config, resolveNodeName(config.hostnameOverride), validation, logger);
  // Awaited in openRunObjects, after the host: a failure is reported there, in that order.
  opened.catch(() => undefined);
  return { validation, opened };
}

export async function openRunObjects(
  run: RunHost,
  options: ParsedFlags['options'],
  config: KubeProxyConfiguration,
  logger: Logger,
  pending: PendingObjects = startRunObjects(options, config, logger),
): Promise<RunObjects> {
  const { validation } = pending;
  const opened = await pending.opened;
  const sourceNode = opened.source.node();
  const node = validation.admitNode(sourceNode);
  if (!sourceNode) logger.warn('This node was not found', { node: run.nodeName });
  const { primary, ips } = resolveNodeIPs(config.bindAddress, node, logger);
  const families = proxiedFamilies({ primary, nodeIPs: ips, clusterCIDR: config.clusterCIDR, dryRun: options.dryRun, host: run.host });
  return { ...opened, validation, node, nodeIPs: ips, families };
}
