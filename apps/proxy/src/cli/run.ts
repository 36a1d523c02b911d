import { writeFile } from 'node:fs/promises';
import type { DependencyContainer } from 'tsyringe';
import {
  PROVIDER,
  PROXY_CONTEXT,
  SYSCTL,
  createLogger,
  encodeConfiguration,
  formatHelp,
  parseFlags,
  systemClock,
  type BackendPlugin,
  type HostCapabilities,
  type KubeProxyConfiguration,
  type Logger,
  type ParsedFlags,
  type Provider,
  type ProxyContext,
  type Sysctl,
  type TextSink,
} from '@kube-proxy/core';
import { releaseFirstSyncPeak } from '../agent/first-sync-heap-release.js';
import type { BackendRegistry } from '../registry/backend-registry.js';
import { cleanupOtherModes } from '../mode/switch-cleanup.js';
import { recordModeEvents, selectMode } from '../mode/select-mode.js';
import type { ObjectValidation } from '../sources/validating-handlers.js';
import type { OpenedSource } from './open-source.js';
import { ConfigFileWatch } from './config-file-watch.js';
import { DebugState } from '../trace/debug-state.js';
import { debugRoutes } from '../trace/debug-routes.js';
import type { ObjectStore } from '../trace/object-store.js';
import { openRunHost, openRunObjects, startRunObjects } from './run-setup.js';
import { stdoutSink } from './stdout-sink.js';
import { loadConfiguration } from './load-configuration.js';
import { knownFailure } from './cli-failure.js';
import { runSubcommand } from './subcommand.js';
import { duringInterruptibleWork, onceTerminated } from './signals.js';
import { versionLine } from './version.js';
import { zpagesFor } from './zpages-setup.js';
import {
  ProxyAgent,
  apiSourceHealth,
  fanOutNodeHandler,
  healthTimeoutMs,
  servePolicy,
} from '../agent/index.js';

/** Where the CLI writes: stdout only for --dry-run output (and --help/--version), stderr for logs. */
export interface CliIO {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** Runs the kube-proxy command line and resolves with the process exit code. */
export async function runCli(argv: readonly string[], io: CliIO = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const fail = (message: string, code = 1): number => {
    io.stderr.write(`kube-proxy: ${message}\n`);
    return code;
  };
  const command = argv[0];
  if (command === 'trace' || command === 'explain') return runSubcommand(command, argv.slice(1), io);

  let parsed: ParsedFlags;
  let config: KubeProxyConfiguration;
  let configFileText: string | undefined;
  try {
    parsed = parseFlags(argv);
    if (parsed.options.help) {
      io.stdout.write(formatHelp());
      return 0;
    }
    if (parsed.options.version) {
      io.stdout.write(versionLine() + '\n');
      return 0;
    }
    ({ config, fileText: configFileText } = await loadConfiguration(parsed));
  } catch (err) {
    const known = knownFailure(err);
    if (known) return fail(known.message, known.code);
    throw err;
  }

  if (parsed.options.writeConfigTo) {
    await writeFile(parsed.options.writeConfigTo, encodeConfiguration(config));
    io.stderr.write(`kube-proxy: wrote configuration to ${parsed.options.writeConfigTo}\n`);
    return 0;
  }

  const logger = createLogger({ verbosity: config.logging.verbosity, format: config.logging.format, stream: io.stderr });
  for (const w of parsed.warnings) logger.warn(w);
  try {
    return await runProxy(parsed, config, configFileText, logger, io);
  } catch (err) {
    const known = knownFailure(err);
    if (known) return fail(known.message, known.code);
    logger.error('kube-proxy failed', { err: (err as Error).stack ?? String(err) });
    return 1;
  }
}

async function runProxy(
  parsed: ParsedFlags,
  config: KubeProxyConfiguration,
  configFileText: string | undefined,
  logger: Logger,
  io: CliIO,
): Promise<number> {
  const { options } = parsed;
  logger.info(versionLine());

  // The source loads while the host is probed (see startRunObjects); --cleanup reads no objects.
  const pending = options.cleanup ? undefined : startRunObjects(options, config, logger);
  const run = await openRunHost(options, config, logger);
  const { registry, base, nodeName, host } = run;
  // A signal during --cleanup exits 1: the leftovers may be half removed.
  if (!pending) return duringInterruptibleWork(1, () => cleanupAll(registry, base, config, nodeName, host, logger));

  const objects = await openRunObjects(run, options, config, logger, pending);
  const { source, apiSource, nodeEvents, nodeStatus, nodeIPs: ips, families, validation } = objects;

  const plugin = await selectMode({ requested: config.mode, registry, host, logger, dryRun: options.dryRun, config });
  // As upstream, the IPVS deprecation and the defaulted mode also go to the Node as Warning events
  // (never in --dry-run, whose recorder is the no-op one).
  recordModeEvents(nodeEvents, config.mode, plugin.name);
  // /debug/trace and /debug/explain answer from what this run holds: its objects, and the last block
  // it printed (--dry-run) or its kernel's rules.
  const serve = servePolicy({ dryRun: options.dryRun, flagsGiven: parsed.values });
  const debug = new DebugState({ plugin, config, nodeName, families, nodeIPs: ips, executor: run.executor, dryRun: options.dryRun });
  // The last block is kept (a 10k-Service block is ~16 MB) only when a metrics server can ask for it.
  const served = serve.metrics && config.metricsBindAddress !== '';
  const sink: TextSink = served ? debug.recordingSink(stdoutSink(io.stdout)) : stdoutSink(io.stdout);
  const context: ProxyContext = { config, nodeName, nodeIPs: ips, families, dryRun: options.dryRun, dryRunSink: sink, host };
  logger.info('Starting proxier', { mode: plugin.name, node: nodeName, nodeIPs: ips, families, dryRun: options.dryRun });

  // Agent (../agent): health, metrics and health-check servers, host tuning. Built before the backend
  // registers so it can resolve them; servers start once the backend exists, as upstream's Run().
  const agent = new ProxyAgent({
    config,
    mode: plugin.name,
    nodeName,
    dryRun: options.dryRun,
    serve,
    logger,
    clock: systemClock,
    sysctl: base.resolve<Sysctl>(SYSCTL),
    events: nodeEvents,
    // The KubeProxyReady Node condition (API source only; not in --dry-run).
    ...(nodeStatus ? { readiness: { client: nodeStatus, families } } : {}),
    debug: debugRoutes(debug),
    zpages: zpagesFor(parsed, config, true),
    // /healthz (not /livez) also fails once the API server has been unreachable for the healthz timeout.
    ...(apiSource ? { sourceHealth: apiSourceHealth(apiSource, healthTimeoutMs(config, plugin.name)) } : {}),
  });
  const scope = base.createChildContainer();
  scope.register(PROXY_CONTEXT, { useValue: context });
  agent.register(scope);
  await plugin.register(scope, context);
  const provider = scope.resolve<Provider>(PROVIDER);
  // Upstream's platformCleanup (switching between nftables and the iptables-based modes removes what
  // the other left), but only once this mode has synced: the node is never without Service rules.
  const switchCleanup = cleanupOtherModes({ plugin, registry, scope, context, logger, firstSync: provider.firstSync() });
  // Host tuning (oom_score_adj, conntrack sysctls) only once the backend accepted the run: a mode
  // that is refused (an unusable scheduler, a plugin whose register() throws) changes nothing.
  await agent.prepareHost();
  await agent.start(provider.firstSync());
  // A running proxy returns its first sync's peak at once; --once exits right after that sync anyway.
  if (!options.once) void releaseFirstSyncPeak(provider.firstSync(), logger);

  validation.useMetricsFrom(scope);
  // The store's Services and EndpointSlices are for /debug/explain, on the metrics server only.
  const outcome = await serveUntilDone(options, configFileText, source, provider, agent, validation, { store: debug.objects, objects: served });
  // Settled by now (a stopped provider rejects its first sync) or a cleanup already running: finished,
  // so that --once has removed the other modes' leftovers when it exits.
  await switchCleanup;
  await agent.stop();
  return exitCodeOf(outcome, logger);
}

/** Why a run ended: its sync loop ended, a signal, --once's first sync, or a changed --config file. */
type RunOutcome = 'loop-ended' | 'synced' | NodeJS.Signals | { configChanged: string };

/**
 * Feeds the source to the provider and runs its sync loop until something ends the run; then
 * stops the source, the provider and the watches (the agent and the mode-switch cleanup are the
 * caller's).
 */
async function serveUntilDone(
  options: ParsedFlags['options'],
  configFileText: string | undefined,
  source: OpenedSource['source'],
  provider: Provider,
  agent: ProxyAgent,
  validation: ObjectValidation,
  debug: { readonly store: ObjectStore; readonly objects: boolean },
): Promise<RunOutcome> {
  const terminated = onceTerminated();
  // Timers elsewhere are unref'd so a finished run can exit; while the proxy serves, this handle keeps
  // the process alive even when every API connection is down and only backoff timers are pending.
  const keepAlive = setInterval(() => undefined, 60_000);
  source.start(
    validation.wrap(
      debug.store.tap({
        services: provider,
        endpointSlices: provider,
        node: fanOutNodeHandler(provider, agent.nodeHandler),
        // Only a provider that takes ServiceCIDRs gets them (and costs the API server a watch).
        ...(typeof provider.onServiceCIDRsChanged === 'function' ? { serviceCIDRs: provider as Required<Pick<Provider, 'onServiceCIDRsChanged'>> } : {}),
      }, { objects: debug.objects }),
    ),
  );
  const loop = provider.syncLoop();
  // As upstream: a changed or removed --config file ends the process (non-zero), and the DaemonSet
  // restarts it with the new configuration.
  let configWatch: ConfigFileWatch | undefined;
  const configChanged = new Promise<{ configChanged: string }>((resolve) => {
    if (options.configFile && configFileText !== undefined) {
      configWatch = new ConfigFileWatch(options.configFile, configFileText, (reason) => resolve({ configChanged: reason }));
      configWatch.start();
    }
  });

  const outcome = await Promise.race([
    loop.then(() => 'loop-ended' as const),
    terminated.promise.then((s) => s),
    options.once ? provider.firstSync().then(() => 'synced' as const) : new Promise<never>(() => undefined),
    configChanged,
  ]);
  // --once exits with the table a running proxy converges to (e.g. flushed old chains deleted).
  if (outcome === 'synced') await provider.settled?.();
  configWatch?.stop();
  clearInterval(keepAlive);
  source.stop();
  provider.stop();
  terminated.dispose();
  await loop.catch(() => undefined);
  return outcome;
}

function exitCodeOf(outcome: RunOutcome, logger: Logger): number {
  if (outcome === 'synced') {
    logger.info('First sync done; exiting because of --once');
  } else if (typeof outcome === 'object') {
    logger.error('Exiting so that the new configuration is loaded on restart', { reason: outcome.configChanged });
    return 1;
  } else if (outcome === 'loop-ended') {
    logger.error('Sync loop ended unexpectedly');
    return 1;
  } else {
    // Rules stay in place: a restarting proxy must not interrupt traffic.
    logger.info('Received signal, shutting down; programmed rules are left in place', { signal: outcome });
  }
  return 0;
}

async function cleanupAll(
  registry: BackendRegistry,
  base: DependencyContainer,
  config: KubeProxyConfiguration,
  nodeName: string,
  host: HostCapabilities,
  logger: Logger,
): Promise<number> {
  const context: ProxyContext = {
    config,
    nodeName,
    nodeIPs: {},
    families: ['IPv4', 'IPv6'],
    dryRun: false,
    dryRunSink: { write: () => undefined },
    host,
  };
  let failed = false;
  const withCleanup: BackendPlugin[] = registry.all().filter((b) => typeof b.cleanup === 'function');
  for (const b of withCleanup) {
    const scope = base.createChildContainer();
    scope.register(PROXY_CONTEXT, { useValue: context });
    try {
      await b.cleanup!(scope, context);
      logger.info('Cleaned up backend', { mode: b.name });
    } catch (err) {
      failed = true;
      logger.error('Cleanup failed', { mode: b.name, err: (err as Error).message });
    }
  }
  return failed ? 1 : 0;
}
