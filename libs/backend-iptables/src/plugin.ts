import type { BackendPorts, DetectResult, HostCapabilities } from '@kube-proxy/core';
import { defineBackend } from '@kube-proxy/core';
import { iptablesForRun } from '@kube-proxy/netfilter-iptables';
import { cleanupAllIptables } from './cleanup.js';
import { NfacctClient, NfacctCounters } from './nfacct/index.js';
import { IptablesProxier } from './proxier/iptables-proxier.js';
import { defineIptablesModeMetrics } from './metrics.js';
import { iptablesTracer } from './trace/index.js';

/**
 * The iptables proxy mode (upstream's default on Linux): one IptablesProxier per family. nfacct
 * counters are per network namespace: one set for both families. Never in --dry-run (nothing is
 * created, so the printed tables carry no nfacct match).
 */
export const iptablesBackend = defineBackend<BackendPorts, NfacctCounters | undefined>({
  name: 'iptables',
  metrics: defineIptablesModeMetrics,
  packageJson: new URL('../package.json', import.meta.url),
  detect(host: HostCapabilities): DetectResult {
    const variant = host.iptablesVariant;
    if (!host.tools.iptables.present || variant === undefined) {
      return { usable: false, reason: `no iptables binary found (${host.iptablesVariantReason})` };
    }
    const version = host.tools.iptables.version ?? 'unknown version';
    return { usable: true, reason: `iptables ${version} (${variant}): ${host.iptablesVariantReason}` };
  },
  prepare(ports, context) {
    if (context.dryRun) return undefined;
    const nfacct = new NfacctCounters(new NfacctClient(ports.executor, ports.logger), ports.clock);
    ports.observers.metrics?.nfacctCounters(() => nfacct.readPackets());
    return nfacct;
  },
  createProxier(family, { ports, context, shared: nfacct, tagDryRunOutput }) {
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
      tagDryRunOutput,
      observers: ports.observers,
      ...(nfacct ? { nfacct } : {}),
    });
  },
  cleanup: (ports) => cleanupAllIptables({ executor: ports.executor, logger: ports.logger }),
  cleanupSubject: 'iptables rules',
  // `kube-proxy trace` / `explain` over our --dry-run output or this host's rules (upstream's too).
  tracer: iptablesTracer,
});

export default iptablesBackend;
