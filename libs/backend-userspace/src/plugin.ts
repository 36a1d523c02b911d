import { CLOCK, COMMAND_EXECUTOR, defineBackend, LOGGER, parseDuration, resolveObservers, type Clock, type CommandExecutor, type DetectResult, type IPFamily, type Logger, type ProxierObservers, type ProxyContext } from '@kube-proxy/core';
import { Iptables, type IptablesInterface } from '@kube-proxy/netfilter-iptables';
import { cleanupUserspace } from './cleanup.js';
import { UserspaceProxier } from './proxier/userspace-proxier.js';
import { DataPlaneClient, workerChannel } from './dataplane/client.js';
import { allocateCounters, sharedCounters } from './dataplane/shared-counters.js';
import { newProxyCounters, proxyFdBudget, dryRunSocketOpener } from '@kube-proxy/userspace-proxy';
import { listenAddress } from './proxier/userspace-proxier.js';
import { defineUserspaceModeMetrics } from './metrics.js';
import { userspaceTracer } from './trace/userspace-tracer.js';

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

/** What both families' proxiers share: the data plane worker and its shared-memory counters. */
interface UserspaceRun {
  /** Why capture rules are not installed, when they are not. */
  readonly captureOff: string | undefined;
  readonly counterBlocks: ReadonlyMap<IPFamily, SharedArrayBuffer>;
  readonly dataPlane: DataPlaneClient | undefined;
}

function prepareRun(ports: UserspacePorts, context: ProxyContext): UserspaceRun {
  const captureOff = context.dryRun ? undefined : captureUnavailable(context, ports.uid);
  if (captureOff !== undefined) {
    ports.logger.warn(
      `Capture rules are NOT installed (${captureOff}): Services are not reachable on their cluster IPs, external IPs or NodePorts, only on the proxy ports logged as "Opened proxy port"`,
    );
  }
  // Proxy sockets run in a worker thread (the data plane); the counters it keeps are shared memory.
  const counterBlocks = new Map(context.families.map((f) => [f, allocateCounters()] as const));
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
  return { captureOff, counterBlocks, dataPlane };
}

/**
 * Userspace mode: an L4 proxy in this process, with iptables capture rules sending Service traffic
 * to it. It needs only sockets to run (without root or iptables it serves on its proxy ports only).
 */
export const userspaceBackend = defineBackend<UserspacePorts, UserspaceRun>({
  name: 'userspace',
  metrics: defineUserspaceModeMetrics,
  /** `kube-proxy trace` / `explain`: capture rules → proxy socket → its endpoints. */
  tracer: userspaceTracer,
  packageJson: new URL('../package.json', import.meta.url),
  detect(): DetectResult {
    return { usable: true, reason: 'the userspace proxy needs only sockets; capture rules need iptables and root' };
  },
  resolvePorts(container, name) {
    return {
      logger: container.resolve<Logger>(LOGGER).child({ backend: name }),
      clock: container.resolve<Clock>(CLOCK),
      executor: container.resolve<CommandExecutor>(COMMAND_EXECUTOR),
      observers: resolveObservers(container),
      ...(typeof process.geteuid === 'function' ? { uid: process.geteuid() } : {}),
    };
  },
  prepare: prepareRun,
  createProxier(family, { ports, context, shared, tagDryRunOutput }) {
    const block = shared.counterBlocks.get(family);
    const counters = block ? sharedCounters(block) : newProxyCounters();
    let iptables: IptablesInterface | null = null;
    if (!context.dryRun && shared.captureOff === undefined && context.host.iptablesVariant !== undefined) {
      iptables = new Iptables({ family, variant: context.host.iptablesVariant, executor: ports.executor, logger: ports.logger });
    }
    const dataPlane = shared.dataPlane;
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
      tagDryRunOutput,
    });
    dataPlane?.onLost(() => proxier.dataPlaneLost());
    return proxier;
  },
  /** --cleanup: removes the capture chains (ours, and upstream's old userspace proxier's: the same). */
  cleanup: (ports) => cleanupUserspace(ports.executor, ports.logger),
  cleanupSubject: 'userspace capture rules',
});
