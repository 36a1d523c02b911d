import { createRequire } from 'node:module';
import type {
  BackendPlugin,
  Clock,
  CommandExecutor,
  DetectResult,
  HostCapabilities,
  IPFamily,
  Logger,
  Provider,
  ProxyContext,
  Sysctl,
} from '@kube-proxy/core';
import {
  BACKEND_PLUGIN_API_VERSION,
  DualStackProvider,
  iptablesForRun,
  PROVIDER,
  resolveBackendPorts,
} from '@kube-proxy/core';
import { cleanupAllIptables } from './cleanup.js';

import { IptablesProxier } from './proxier/iptables-proxier.js';
import { NfacctClient, NfacctCounters } from './nfacct/index.js';
import type { ProxierObservers } from '@kube-proxy/core';

/** The tsyringe container type, as the plugin contract spells it. */
type Container = Parameters<BackendPlugin['register']>[0];

/** This package's version, read from its package.json next to src/ and dist/ alike. */
function packageVersion(): string {
  try {
    const require = createRequire(import.meta.url);
    const pkg = require('../package.json') as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

interface Ports {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly executor: CommandExecutor;
  readonly sysctl: Sysctl;
  /** Health, metrics and health-check ports: used when the host app registered them. */
  readonly observers?: ProxierObservers;
}

function resolvePorts(container: Container): Ports {
  return resolveBackendPorts(container, 'iptables');
}

/** Builds the Provider for a run: one IptablesProxier per family, a DualStackProvider over two. */
export function createIptablesProvider(ports: Ports, context: ProxyContext): Provider {
  const families = context.families;
  if (families.length === 0 || families.length > 2) {
    throw new Error(`iptables backend: expected one or two IP families, got ${JSON.stringify(families)}`);
  }
  // nfacct counters are per network namespace: one set for both families. Never in --dry-run (nothing
  // is created, so the printed tables carry no nfacct match).
  const nfacct = context.dryRun ? undefined : new NfacctCounters(new NfacctClient(ports.executor, ports.logger), ports.clock);
  if (nfacct) ports.observers?.metrics?.nfacctCounters(() => nfacct.readPackets());
  const build = (family: IPFamily): IptablesProxier => {
    const { iptables, dryRunTables } = iptablesForRun('iptables', family, context, ports.executor, ports.logger);
    return new IptablesProxier({
      family,
      context,
      iptables,
      executor: ports.executor,
      sysctl: ports.sysctl,
      clock: ports.clock,
      logger: ports.logger,
      ...(dryRunTables ? { dryRunTables } : {}),
      tagDryRunOutput: families.length > 1,
      observers: ports.observers,
      ...(nfacct ? { nfacct } : {}),
    });
  };
  const [first, second] = families as [IPFamily, IPFamily | undefined];
  return second === undefined ? build(first) : new DualStackProvider(build(first), build(second));
}

/** The iptables proxy mode (upstream's default on Linux). */
export const iptablesBackend: BackendPlugin = {
  apiVersion: BACKEND_PLUGIN_API_VERSION,
  name: 'iptables',
  version: packageVersion(),

  detect(host: HostCapabilities): DetectResult {
    const variant = host.iptablesVariant;
    if (!host.tools.iptables.present || variant === undefined) {
      return { usable: false, reason: `no iptables binary found (${host.iptablesVariantReason})` };
    }
    const version = host.tools.iptables.version ?? 'unknown version';
    return { usable: true, reason: `iptables ${version} (${variant}): ${host.iptablesVariantReason}` };
  },

  register(container: Container, context: ProxyContext): void {
    const provider = createIptablesProvider(resolvePorts(container), context);
    container.register<Provider>(PROVIDER, { useValue: provider });
  },

  async cleanup(container: Container, context: ProxyContext): Promise<void> {
    const { logger, executor } = resolvePorts(container);
    if (context.dryRun) {
      logger.info('Dry run: not removing iptables rules');
      return;
    }
    const encounteredError = await cleanupAllIptables({ executor, logger });
    if (encounteredError) throw new Error('iptables backend: encountered an error while tearing down rules');
  },
};

export default iptablesBackend;
