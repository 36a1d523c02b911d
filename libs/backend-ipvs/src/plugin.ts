import {
  BACKEND_PLUGIN_API_VERSION,
  COMMAND_EXECUTOR,
  DualStackProvider,
  iptablesForRun,
  LOGGER,
  PROVIDER,
  resolveBackendPorts,
  type BackendPlugin,
  type BackendPorts,
  type CommandExecutor,
  type DetectResult,
  type HostCapabilities,
  type IPFamily,
  type KubeProxyConfiguration,
  type Logger,
  type ProxierObservers,
  type Provider,
  type ProxyContext,
} from '@kube-proxy/core';
import { createRequire } from 'node:module';
import { cleanupIpvs } from './cleanup.js';
import { HostIpvsKernel } from './kernel/host-ipvs-kernel.js';
import type { IpvsKernel } from './kernel/ipvs-kernel.js';
import { MemoryIpvsKernel } from './kernel/memory-ipvs-kernel.js';
import { HostSetup } from './proxier/host-setup.js';
import { IpvsProxier } from './proxier/ipvs-proxier.js';
import { DEFAULT_IPVS_SCHEDULER } from './state/build-desired-state.js';

/** The tsyringe container type, as the plugin contract spells it. */
type Container = Parameters<BackendPlugin['register']>[0];

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

type Ports = Omit<BackendPorts, 'observers'> & { readonly observers?: ProxierObservers };

/** --ipvs-scheduler as the kernel names it (empty: rr, as upstream). */
export function configuredScheduler(config: Pick<KubeProxyConfiguration, 'ipvs'> | undefined): string {
  const s = config?.ipvs.scheduler ?? '';
  return s === '' ? DEFAULT_IPVS_SCHEDULER : s;
}

/**
 * Builds the Provider for a run: one IpvsProxier per family (a DualStackProvider over two) sharing
 * one kernel (IPVS, ipsets and kube-ipvs0 are per network namespace) and one host setup. Nothing
 * on the host is touched here: the sysctls are written by the first sync, so a run refused after
 * register() leaves the host as it was. --dry-run: an in-memory kernel and in-memory iptables.
 */
export function createIpvsProvider(ports: Ports, context: ProxyContext): Provider {
  const families = context.families;
  if (families.length === 0 || families.length > 2) {
    throw new Error(`ipvs backend: expected one or two IP families, got ${JSON.stringify(families)}`);
  }
  const config = context.config;
  if (config.ipvs.scheduler === '') ports.logger.info('IPVS scheduler not specified, use rr by default');
  const kernel: IpvsKernel = context.dryRun ? new MemoryIpvsKernel() : new HostIpvsKernel(ports.executor);
  const hostSetup = context.dryRun
    ? undefined
    : new HostSetup({
        sysctl: ports.sysctl,
        executor: ports.executor,
        logger: ports.logger,
        ipvs: config.ipvs,
        kernelRelease: context.host.kernelRelease,
        loadIpvs: () => kernel.readVirtualServers(families[0] as IPFamily),
      });
  const build = (family: IPFamily): IpvsProxier => {
    const { iptables, dryRunTables } = iptablesForRun('ipvs', family, context, ports.executor, ports.logger);
    return new IpvsProxier({
      family,
      context,
      kernel,
      iptables,
      executor: ports.executor,
      clock: ports.clock,
      logger: ports.logger,
      ...(hostSetup ? { hostSetup } : {}),
      ...(dryRunTables ? { dryRunTables } : {}),
      tagDryRunOutput: families.length > 1,
      ...(ports.observers ? { observers: ports.observers } : {}),
    });
  };
  const [first, second] = families as [IPFamily, IPFamily | undefined];
  return second === undefined ? build(first) : new DualStackProvider(build(first), build(second));
}

/**
 * IPVS mode (upstream's pkg/proxy/ipvs): virtual servers per service address, ipsets matched by a
 * small iptables skeleton, VIPs on the kube-ipvs0 dummy link. Detection decides whether `auto`
 * picks it: the kernel's IPVS, ipset and ipvsadm (core's detector), and the configured scheduler's
 * module, as upstream's CanUseIPVSProxier checks the scheduler.
 */
export const ipvsBackend: BackendPlugin = {
  apiVersion: BACKEND_PLUGIN_API_VERSION,
  name: 'ipvs',
  version: pkg.version,
  detect(host: HostCapabilities, config?: KubeProxyConfiguration): DetectResult {
    if (!host.ipvs.available) return { usable: false, reason: host.ipvs.reason };
    const scheduler = configuredScheduler(config);
    const known = host.ipvs.schedulers;
    if (known !== undefined && !known.includes(scheduler)) {
      return {
        usable: false,
        reason: `IPVS scheduler "${scheduler}" is not available in this kernel (no ip_vs_${scheduler} module; found: ${known.join(', ') || 'none'})`,
      };
    }
    return { usable: true, reason: host.ipvs.reason };
  },
  register(container: Container, context: ProxyContext): void {
    container.register<Provider>(PROVIDER, { useValue: createIpvsProvider(resolveBackendPorts(container, 'ipvs'), context) });
  },
  /** --cleanup: removes what an IPVS kube-proxy (upstream's or this one) left. */
  async cleanup(container: Container, context: ProxyContext): Promise<void> {
    const logger = container.resolve<Logger>(LOGGER).child({ backend: 'ipvs' });
    if (context.dryRun) {
      logger.info('Dry run: not removing IPVS leftovers');
      return;
    }
    const executor = container.resolve<CommandExecutor>(COMMAND_EXECUTOR);
    if (await cleanupIpvs(executor, context.host, logger)) throw new Error('ipvs backend: encountered an error while cleaning up');
  },
};
