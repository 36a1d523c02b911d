import { availableParallelism, cpus } from 'node:os';
import { parseDurationNs, type KubeProxyConntrackConfiguration, type Logger, type Sysctl } from '@kube-proxy/core';
import { noopNodeEventRecorder, REASON_FAILED_TO_SET_CONNTRACK, REASON_READ_ONLY_SYSFS, type NodeEventRecorder } from './node-events.js';

export const SYSCTL_CONNTRACK_MAX = 'net/netfilter/nf_conntrack_max';
export const SYSCTL_TCP_TIMEOUT_ESTABLISHED = 'net/netfilter/nf_conntrack_tcp_timeout_established';
export const SYSCTL_TCP_TIMEOUT_CLOSE_WAIT = 'net/netfilter/nf_conntrack_tcp_timeout_close_wait';
export const SYSCTL_TCP_BE_LIBERAL = 'net/netfilter/nf_conntrack_tcp_be_liberal';
export const SYSCTL_UDP_TIMEOUT = 'net/netfilter/nf_conntrack_udp_timeout';
export const SYSCTL_UDP_TIMEOUT_STREAM = 'net/netfilter/nf_conntrack_udp_timeout_stream';
export const SYSCTL_BRIDGE_NF_CALL_IPTABLES = 'net/bridge/bridge-nf-call-iptables';

/**
 * The node's CPU count: every online CPU, not the ones this process may run on, because
 * nf_conntrack_max is host-wide (upstream sizes it from sysfs for the same reason).
 */
export function hostCPUCount(): number {
  return cpus().length || availableParallelism();
}

/**
 * upstream's getConntrackMax: maxPerCore × CPUs, but at least `min`; 0 (leave the kernel's value)
 * when maxPerCore is 0. (Upstream HEAD also caps it at 1M; v1.31–v1.34 do not.)
 */
export function conntrackMax(config: KubeProxyConntrackConfiguration, numCPU: number): number {
  if (!(config.maxPerCore > 0)) return 0;
  const scaled = config.maxPerCore * numCPU;
  return scaled > config.min ? scaled : config.min;
}

function seconds(duration: string): number {
  return Math.trunc(parseDurationNs(duration) / 1e9);
}

/**
 * The conntrack sysctls from the configuration, at startup (upstream's conntrack.SetSysctls): each
 * is written only when the kernel's value differs, and a zero/unset setting leaves the kernel's
 * value alone. Unlike upstream, a sysctl that cannot be written is a warning, not a fatal error:
 * a read-only /proc/sys or EPERM is what a proxy in a non-initial network namespace or a
 * restricted container gets, and the datapath still works with the kernel's defaults. Each such
 * failure is also a Warning event on the Node (`events`): reason readOnlySysFS (upstream's, for its
 * read-only sysfs case) when the filesystem or permissions refused it, FailedToSetConntrack otherwise.
 *
 * Not done: growing /sys/module/nf_conntrack/parameters/hashsize to max/4 (the Sysctl port covers
 * /proc/sys only; a small hash table costs lookup speed, not correctness).
 */
export async function setupConntrack(opts: {
  readonly config: KubeProxyConntrackConfiguration;
  readonly sysctl: Sysctl;
  readonly logger: Logger;
  readonly numCPU?: number;
  /** Where a failed write is reported as a Node event; none by default. */
  readonly events?: NodeEventRecorder;
}): Promise<void> {
  const { config, sysctl, logger } = opts;
  const events = opts.events ?? noopNodeEventRecorder;
  const set = (name: string, value: number) => setIfDifferent(sysctl, logger, events, name, value);

  const max = conntrackMax(config, opts.numCPU ?? hostCPUCount());
  if (max > 0) {
    logger.info('Setting nf_conntrack_max', { nfConntrackMax: max });
    await set(SYSCTL_CONNTRACK_MAX, max);
  }
  const established = seconds(config.tcpEstablishedTimeout);
  if (established > 0) await set(SYSCTL_TCP_TIMEOUT_ESTABLISHED, established);
  const closeWait = seconds(config.tcpCloseWaitTimeout);
  if (closeWait > 0) await set(SYSCTL_TCP_TIMEOUT_CLOSE_WAIT, closeWait);
  if (config.tcpBeLiberal) await set(SYSCTL_TCP_BE_LIBERAL, 1);
  const udp = seconds(config.udpTimeout);
  if (udp > 0) await set(SYSCTL_UDP_TIMEOUT, udp);
  const udpStream = seconds(config.udpStreamTimeout);
  if (udpStream > 0) await set(SYSCTL_UDP_TIMEOUT_STREAM, udpStream);
}

async function setIfDifferent(sysctl: Sysctl, logger: Logger, events: NodeEventRecorder, name: string, value: number): Promise<void> {
  const current = await sysctl.get(name);
  if (current !== undefined && current !== '' && Number(current) === value) return;
  logger.info('Set sysctl', { entry: name, value });
  try {
    await sysctl.set(name, String(value));
  } catch (err) {
    const text = String((err as Error)?.message ?? err);
    const restricted = /\b(EACCES|EPERM|EROFS)\b|read-only|permission denied/i.test(text);
    logger.warn(
      restricted
        ? 'Cannot set conntrack sysctl (read-only /proc/sys or no permission, as in a non-initial network namespace); keeping the kernel value'
        : 'Cannot set conntrack sysctl; keeping the kernel value',
      { entry: name, value, current, err: text },
    );
    events.warning(
      restricted ? REASON_READ_ONLY_SYSFS : REASON_FAILED_TO_SET_CONNTRACK,
      `Cannot set sysctl ${name} to ${value}${restricted ? ' (read-only /proc/sys or no permission)' : ''}: ${text}; ` +
        'keeping the kernel value, problems may arise later',
    );
  }
}

/**
 * Containers on a Linux bridge need br_netfilter with bridge-nf-call-iptables=1, or bridged traffic
 * to Services bypasses the rules. Upstream's iptables and ipvs proxiers only log about it; so do we.
 * A missing sysctl (module not loaded, or no bridge in use) says nothing, as upstream.
 */
export async function checkBridgeNetfilter(sysctl: Sysctl, logger: Logger): Promise<void> {
  const value = await sysctl.get(SYSCTL_BRIDGE_NF_CALL_IPTABLES);
  if (value !== undefined && value !== '1') {
    logger.warn('Missing br-netfilter module or unset sysctl br-nf-call-iptables, proxy may not work as intended', {
      sysctl: SYSCTL_BRIDGE_NF_CALL_IPTABLES,
      value,
    });
  }
}
