import {
  BACKEND_PLUGIN_API_VERSION,
  CLOCK,
  COMMAND_EXECUTOR,
  DualStackProvider,
  Iptables,
  LOGGER,
  parseDuration,
  PROVIDER,
  resolveObservers,
  type BackendPlugin,
  type Clock,
  type CommandExecutor,
  type DetectResult,
  type IPFamily,
  type IptablesInterface,
  type Logger,
  type ProxierObservers,
  type ProxyContext,
  type Provider,
} from '@kube-proxy/core';
import { createRequire } from 'node:module';
import { cleanupUserspace } from './cleanup.js';
import { UserspaceProxier } from './proxier/userspace-proxier.js';
import { DataPlaneClient, workerChannel } from './dataplane/client.js';
import { allocateCounters, sharedCounters } from './dataplane/shared-counters.js';
import { newProxyCounters } from './proxy/counters.js';
import { proxyFdBudget } from './proxy/fd-budget.js';
import { dryRunSocketOpener } from './proxy/open-socket.js';
import { listenAddress } from './proxier/userspace-proxier.js';

/** The tsyringe container type, as the plugin contract spells it. */
type Container = Parameters<BackendPlugin['register']>[0];

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

export interface UserspacePorts {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly executor: CommandExecutor;
  readonly observers: ProxierObservers;
  /** The effective user id (injected for tests); capture rules need root. */
  readonly uid?: number;
}

/** Why capture rules cannot be installed on this host, or undefined when they can. */
function captureUnavailable(context: ProxyContext, uid: number | undefined): string | undefined {
  if (uid !== undefined && uid !== 0) return 'not running as root';
  if (context.host.iptablesVariant === undefined) return `no usable iptables: ${context.host.iptablesVariantReason}`;
  return undefined;
}

/** One UserspaceProxier per family; a DualStackProvider over two. */
export function createUserspaceProvider(ports: UserspacePorts, context: ProxyContext): Provider {
  const families = context.families;
  if (families.length === 0 || families.length > 2) {
    throw new Error(`userspace backend: expected one or two IP families, got ${JSON.stringify(families)}`);
  }
  const captureOff = context.dryRun ? undefined : captureUnavailable(context, ports.uid);
  if (captureOff !== undefined) {
    ports.logger.warn(
      `Capture rules are NOT installed (${captureOff}): Services are not reachable on their cluster IPs, external IPs or NodePorts, only on the proxy ports logged as "Opened proxy port"`,
    );
  }
  // Proxy sockets run in a worker thread (the data plane); the counters it keeps are shared memory.
  const counterBlocks = new Map(families.map((f) => [f, allocateCounters()] as const));
  const dataPlane = context.dryRun
    ? undefined
    : new DataPlaneClient(
        () =>
          workerChannel({
            udpIdleTimeoutMs: parseDuration(context.config.udpIdleTimeout),
            fdBudget: proxyFdBudget(),
            counters: Object.fromEntries(counterBlocks),
          }),
        ports.logger,
      );
  const build = (family: IPFamily): UserspaceProxier => {
    const block = counterBlocks.get(family);
    const counters = block ? sharedCounters(block) : newProxyCounters();
    let iptables: IptablesInterface | null = null;
    if (!context.dryRun && captureOff === undefined && context.host.iptablesVariant !== undefined) {
      iptables = new Iptables({ family, variant: context.host.iptablesVariant, executor: ports.executor, logger: ports.logger });
    }
    const openSocket = dataPlane ? dataPlane.opener(family, listenAddress(context.config.bindAddress, family)) : dryRunSocketOpener();
    ports.observers.metrics?.proxySockets(family, () => counters);
    const proxier = new UserspaceProxier({
      family,
      context,
      iptables,
      openSocket,
      counters,
      clock: ports.clock,
      logger: ports.logger,
      observers: ports.observers,
      tagDryRunOutput: families.length > 1,
    });
    dataPlane?.onLost(() => proxier.dataPlaneLost());
    return proxier;
  };
  const [first, second] = families as [IPFamily, IPFamily | undefined];
  return second === undefined ? build(first) : new DualStackProvider(build(first), build(second));
}

/**
 * Userspace mode: an L4 proxy in this process, with iptables capture rules sending Service traffic
 * to it. It needs only sockets to run (without root or iptables it serves on its proxy ports only).
 */
export const userspaceBackend: BackendPlugin = {
  apiVersion: BACKEND_PLUGIN_API_VERSION,
  name: 'userspace',
  version: pkg.version,
  detect(): DetectResult {
    return { usable: true, reason: 'the userspace proxy needs only sockets; capture rules need iptables and root' };
  },
  register(container: Container, context: ProxyContext): void {
    const ports: UserspacePorts = {
      logger: container.resolve<Logger>(LOGGER).child({ backend: 'userspace' }),
      clock: container.resolve<Clock>(CLOCK),
      executor: container.resolve<CommandExecutor>(COMMAND_EXECUTOR),
      observers: resolveObservers(container),
      ...(typeof process.geteuid === 'function' ? { uid: process.geteuid() } : {}),
    };
    container.register<Provider>(PROVIDER, { useValue: createUserspaceProvider(ports, context) });
  },
  /** --cleanup: removes the capture chains (ours, and upstream's old userspace proxier's: the same). */
  async cleanup(container: Container, context: ProxyContext): Promise<void> {
    const logger = container.resolve<Logger>(LOGGER).child({ backend: 'userspace' });
    if (context.dryRun) {
      logger.info('Dry run: not removing userspace capture rules');
      return;
    }
    const executor = container.resolve<CommandExecutor>(COMMAND_EXECUTOR);
    if (await cleanupUserspace(executor, context.host, logger)) throw new Error('userspace backend: encountered an error while cleaning up');
  },
};
