import type { CommandExecutor, CommandResult, HostCapabilities, Logger } from '@kube-proxy/core';
import { cleanupIptablesLeftoversInEveryVariant, type JumpRule, type OwnedChain } from '@kube-proxy/netfilter-iptables';

/** The dummy interface the IPVS proxier binds Service IPs to (upstream's defaultDummyDevice). */
export const DUMMY_DEVICE = 'kube-ipvs0';

/** Upstream's iptablesJumpChain (pkg/proxy/ipvs/proxier.go): unlinked first. */
export const IPVS_JUMPS: readonly JumpRule[] = [
  { table: 'nat', from: 'OUTPUT', to: 'KUBE-SERVICES', comment: 'kubernetes service portals' },
  { table: 'nat', from: 'PREROUTING', to: 'KUBE-SERVICES', comment: 'kubernetes service portals' },
  { table: 'nat', from: 'POSTROUTING', to: 'KUBE-POSTROUTING', comment: 'kubernetes postrouting rules' },
  { table: 'filter', from: 'FORWARD', to: 'KUBE-FORWARD', comment: 'kubernetes forwarding rules' },
  { table: 'filter', from: 'INPUT', to: 'KUBE-NODE-PORT', comment: 'kubernetes health check rules' },
  { table: 'filter', from: 'INPUT', to: 'KUBE-PROXY-FIREWALL', comment: 'kube-proxy firewall rules' },
  { table: 'filter', from: 'FORWARD', to: 'KUBE-PROXY-FIREWALL', comment: 'kube-proxy firewall rules' },
  { table: 'filter', from: 'INPUT', to: 'KUBE-IPVS-FILTER', comment: 'kubernetes ipvs access filter' },
  { table: 'filter', from: 'OUTPUT', to: 'KUBE-IPVS-OUT-FILTER', comment: 'kubernetes ipvs access filter' },
];

/** Upstream's iptablesCleanupChains: flushed, then deleted. */
export const IPVS_CHAINS: readonly OwnedChain[] = [
  { table: 'nat', chain: 'KUBE-SERVICES' },
  { table: 'nat', chain: 'KUBE-POSTROUTING' },
  { table: 'nat', chain: 'KUBE-NODE-PORT' },
  { table: 'nat', chain: 'KUBE-LOAD-BALANCER' },
  { table: 'nat', chain: 'KUBE-MARK-MASQ' },
  { table: 'filter', chain: 'KUBE-FORWARD' },
  { table: 'filter', chain: 'KUBE-NODE-PORT' },
  { table: 'filter', chain: 'KUBE-PROXY-FIREWALL' },
  { table: 'filter', chain: 'KUBE-SOURCE-RANGES-FIREWALL' },
  { table: 'filter', chain: 'KUBE-IPVS-FILTER' },
  { table: 'filter', chain: 'KUBE-IPVS-OUT-FILTER' },
];

/** kube-proxy's ipsets (upstream's ipsetInfo names all start with KUBE-). */
export const IPSET_PREFIX = 'KUBE-';

/**
 * What ipvsadm prints when it cannot open IPVS at all (no ip_vs in the kernel, no module to load):
 * "Can't initialize ipvs: Protocol not available". Any other failure is a real cleanup error.
 */
const IPVS_NOT_IN_KERNEL = /Can't initialize ipvs/i;

function failure(result: CommandResult): string {
  return result.spawnError ?? `exit ${String(result.exitCode)}: ${(result.stderr || result.stdout).trim()}`;
}

/**
 * Upstream's ipvs CleanupLeftovers with the host's tools: clears IPVS (`ipvsadm -C`, only with
 * ipvsadm), deletes the kube-ipvs0 dummy link, removes the IPVS iptables jumps and chains with every
 * iptables variant the host has (nft and legacy, IPv4 and IPv6: one iptables-save and one
 * iptables-restore per table and variant), then destroys the KUBE-* ipsets (after every variant, as
 * either may still reference them). Absence is never an error, so it is safe on a clean node; a set
 * still in use is a warning. Returns true if an error was encountered (logged).
 */
export async function cleanupIpvs(executor: CommandExecutor, host: HostCapabilities, logger: Logger): Promise<boolean> {
  let encounteredError = false;

  if (host.tools.ipvsadm.present) {
    const r = await executor.run('ipvsadm', ['-C']);
    if (r.exitCode !== 0 && IPVS_NOT_IN_KERNEL.test(r.stderr)) {
      // As upstream, whose IPVS interface is nil when the kernel has no IPVS: nothing to clear.
      logger.debug('The kernel has no IPVS; no virtual servers to clear', { error: failure(r) });
    } else if (r.exitCode !== 0) {
      encounteredError = true;
      logger.error('Error flushing IPVS virtual servers', { error: failure(r) });
    }
  } else {
    logger.debug('ipvsadm not present; not clearing IPVS virtual servers');
  }

  const link = await executor.run('ip', ['link', 'del', DUMMY_DEVICE]);
  if (link.spawnError !== undefined) {
    logger.debug('ip not present; not deleting the dummy interface', { device: DUMMY_DEVICE });
  } else if (link.exitCode !== 0 && !/Cannot find device|does not exist/i.test(link.stderr)) {
    encounteredError = true;
    logger.error('Error deleting the dummy interface', { device: DUMMY_DEVICE, error: failure(link) });
  }

  // Every variant, not just the host's default `iptables`: the IPVS proxy may have written with the other.
  if (await cleanupIptablesLeftoversInEveryVariant(executor, logger, IPVS_JUMPS, IPVS_CHAINS)) encounteredError = true;

  if (host.tools.ipset.present) {
    const list = await executor.run('ipset', ['list', '-n']);
    if (list.exitCode !== 0) {
      encounteredError = true;
      logger.error('Error listing ipsets', { error: failure(list) });
    } else {
      const names = list.stdout
        .split('\n')
        .map((l) => l.trim())
        .filter((n) => n.startsWith(IPSET_PREFIX));
      for (const name of names) {
        const r = await executor.run('ipset', ['destroy', name]);
        if (r.exitCode === 0 || /does not exist/i.test(r.stderr)) continue;
        if (/in use/i.test(r.stderr)) {
          logger.warn('ipset is still in use; leaving it', { set: name, error: failure(r) });
          continue;
        }
        encounteredError = true;
        logger.error('Error destroying ipset', { set: name, error: failure(r) });
      }
    }
  } else {
    logger.debug('ipset not present; no ipsets to destroy');
  }
  return encounteredError;
}
