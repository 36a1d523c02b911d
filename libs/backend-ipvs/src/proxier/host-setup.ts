/**
 * The host tuning upstream's IPVS NewProxier does before the first sync (pkg/proxy/ipvs/proxier.go):
 * sysctls that make IPVS NAT work with netfilter, and the IPVS connection timeouts. It runs once per
 * host (both families' proxiers share one HostSetup) and only when the proxier really starts — never
 * in --dry-run and never at register() time, so a mode that is refused changes nothing on the host.
 *
 * - net/ipv4/conf/all/route_localnet=1: NodePorts on 127.0.0.1 and the hairpin masquerade rules.
 * - net/bridge/bridge-nf-call-iptables: only checked (a warning when it is not 1), as upstream.
 * - net/ipv4/vs/conntrack=1: IPVS keeps conntrack entries so the iptables skeleton can masquerade.
 * - net/ipv4/vs/conn_reuse_mode=0 on kernels 4.1 – 5.8 (upstream: older kernels lack it; from 5.9
 *   the kernel's default 1 no longer stalls reused connections, so it is left alone).
 * - net/ipv4/vs/expire_nodest_conn=1, net/ipv4/vs/expire_quiescent_template=1: connections to a
 *   deleted or weight-0 real server are dropped on their next packet, which graceful termination
 *   relies on.
 * - net/ipv4/ip_forward=1.
 * - --ipvs-strict-arp: net/ipv4/conf/all/arp_ignore=1, arp_announce=2 (the node does not answer ARP
 *   for the VIPs bound on kube-ipvs0).
 * - --ipvs-tcp-timeout / --ipvs-tcpfin-timeout / --ipvs-udp-timeout: `ipvsadm --set` when any is
 *   non-zero (0 keeps the kernel's value, as ipvsadm documents).
 * A sysctl that cannot be written is logged and setup goes on (as upstream, which logs and fails only
 * on a few; in a restricted network namespace some are read-only and the proxy still works).
 */
import type { CommandExecutor, IPVSConfiguration, Logger, Sysctl } from '@kube-proxy/core';
import { parseDuration, parseVersion, versionAtLeast } from '@kube-proxy/core';

export const SYSCTL_ROUTE_LOCALNET = 'net/ipv4/conf/all/route_localnet';
export const SYSCTL_BRIDGE_CALL_IPTABLES = 'net/bridge/bridge-nf-call-iptables';
export const SYSCTL_VS_CONNTRACK = 'net/ipv4/vs/conntrack';
export const SYSCTL_CONN_REUSE = 'net/ipv4/vs/conn_reuse_mode';
export const SYSCTL_EXPIRE_NODEST_CONN = 'net/ipv4/vs/expire_nodest_conn';
export const SYSCTL_EXPIRE_QUIESCENT_TEMPLATE = 'net/ipv4/vs/expire_quiescent_template';
export const SYSCTL_IP_FORWARD = 'net/ipv4/ip_forward';
export const SYSCTL_ARP_IGNORE = 'net/ipv4/conf/all/arp_ignore';
export const SYSCTL_ARP_ANNOUNCE = 'net/ipv4/conf/all/arp_announce';

export interface HostSetupOptions {
  readonly sysctl: Sysctl;
  readonly executor: CommandExecutor;
  readonly logger: Logger;
  readonly ipvs: Pick<IPVSConfiguration, 'strictARP' | 'tcpTimeout' | 'tcpFinTimeout' | 'udpTimeout'>;
  /** `uname -r` of the running kernel (HostCapabilities.kernelRelease). */
  readonly kernelRelease: string;
  /**
   * Makes the kernel load ip_vs before the net/ipv4/vs sysctls are written (they exist only then):
   * the proxier passes a read of the IPVS table (`ipvsadm --save -n` loads the module on demand).
   */
  readonly loadIpvs?: () => Promise<unknown>;
}

/** The sysctl writes upstream's NewProxier makes, in its order, for this kernel and configuration. */
export function ipvsSysctls(kernelRelease: string, strictARP: boolean, logger: Logger): Array<readonly [string, string]> {
  const out: Array<readonly [string, string]> = [
    [SYSCTL_ROUTE_LOCALNET, '1'],
    [SYSCTL_VS_CONNTRACK, '1'],
  ];
  const version = parseVersion(kernelRelease);
  if (version === undefined) {
    logger.warn('Cannot tell the kernel version; leaving net/ipv4/vs/conn_reuse_mode alone', { kernelRelease });
  } else if (!versionAtLeast(version, '4.1')) {
    logger.error('Can\'t set sysctl net/ipv4/vs/conn_reuse_mode, kernel version must be at least 4.1', { kernelRelease });
  } else if (!versionAtLeast(version, '5.9')) {
    out.push([SYSCTL_CONN_REUSE, '0']);
  }
  out.push([SYSCTL_EXPIRE_NODEST_CONN, '1'], [SYSCTL_EXPIRE_QUIESCENT_TEMPLATE, '1'], [SYSCTL_IP_FORWARD, '1']);
  if (strictARP) out.push([SYSCTL_ARP_IGNORE, '1'], [SYSCTL_ARP_ANNOUNCE, '2']);
  return out;
}

/** `ipvsadm --set TCP TCPFIN UDP` arguments (seconds), or null when every timeout is 0. */
export function ipvsTimeoutArgs(ipvs: Pick<IPVSConfiguration, 'tcpTimeout' | 'tcpFinTimeout' | 'udpTimeout'>): string[] | null {
  const seconds = [ipvs.tcpTimeout, ipvs.tcpFinTimeout, ipvs.udpTimeout].map((d) => Math.floor(parseDuration(d) / 1000));
  if (seconds.every((s) => s === 0)) return null;
  return ['--set', ...seconds.map(String)];
}

/** Runs the host tuning once; later calls return the same promise. */
export class HostSetup {
  private done: Promise<void> | undefined;

  constructor(private readonly options: HostSetupOptions) {}

  ensure(): Promise<void> {
    this.done ??= this.run();
    return this.done;
  }

  private async run(): Promise<void> {
    const { sysctl, executor, logger, ipvs, kernelRelease, loadIpvs } = this.options;
    if (loadIpvs) {
      try {
        await loadIpvs();
      } catch (err) {
        logger.error('Cannot read the IPVS table; the net/ipv4/vs sysctls may be missing', { error: String(err) });
      }
    }
    const bridge = await sysctl.get(SYSCTL_BRIDGE_CALL_IPTABLES).catch(() => undefined);
    if (bridge !== undefined && bridge !== '1') {
      logger.info('Missing br-netfilter module or unset sysctl br-nf-call-iptables, proxy may not work as intended');
    }
    for (const [name, value] of ipvsSysctls(kernelRelease, ipvs.strictARP, logger)) {
      try {
        if ((await sysctl.get(name)) !== value) await sysctl.set(name, value);
      } catch (err) {
        logger.error('Failed to set sysctl', { sysctl: name, value, error: String(err) });
      }
    }
    const timeouts = ipvsTimeoutArgs(ipvs);
    if (timeouts !== null) {
      const r = await executor.run('ipvsadm', timeouts);
      if (r.exitCode !== 0) logger.error('Failed to configure IPVS timeouts', { args: timeouts, error: (r.stderr || r.spawnError || '').trim() });
    }
  }
}
