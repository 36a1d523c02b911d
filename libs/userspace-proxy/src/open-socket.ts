import type { Clock, IPFamily, Logger } from '@kube-proxy/core';
import type { ProxyCounters } from './counters.js';
import { EndpointPicker, type ProxyTarget } from './endpoint-picker.js';
import type { FdBudget } from './fd-budget.js';
import type { OpenProxySocket, OpenRequest, ProxySocketHandle } from './socket-handle.js';
import { TcpProxySocket } from './tcp-proxy-socket.js';
import { UdpProxySocket } from './udp-proxy-socket.js';

export interface SocketOptions {
  readonly family: IPFamily;
  /** --bind-address: where proxy sockets listen. */
  readonly listenIP: string;
  readonly udpIdleTimeoutMs: number;
  readonly counters: ProxyCounters;
  /** Shared by every proxy socket of the process (both families). */
  readonly budget: FdBudget;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Opens proxy sockets (TCP server or UDP socket) in this thread, each with its own EndpointPicker. */
export function localSocketOpener(options: SocketOptions): OpenProxySocket {
  return async (request: OpenRequest): Promise<ProxySocketHandle> => {
    const picker = new EndpointPicker(options.clock);
    picker.update(request.endpoints, request.affinitySeconds);
    const socket =
      request.protocol === 'TCP'
        ? new TcpProxySocket(picker, options.counters, options.budget, options.logger)
        : new UdpProxySocket(options.family, picker, options.udpIdleTimeoutMs, options.counters, options.budget, options.logger);
    let port: number;
    try {
      port = await socket.listen(options.listenIP, request.port);
    } catch (err) {
      socket.close();
      throw err;
    }
    let affinity = request.affinitySeconds;
    return {
      port,
      get endpoints() {
        return picker.targets;
      },
      get affinitySeconds() {
        return affinity;
      },
      update(endpoints: readonly ProxyTarget[], affinitySeconds: number): void {
        affinity = affinitySeconds;
        picker.update(endpoints, affinitySeconds);
        picker.sweep();
      },
      close: () => socket.close(),
    };
  };
}

/** The kernel's default ephemeral range (net.ipv4.ip_local_port_range), where port 0 binds land. */
export const KERNEL_EPHEMERAL_PORTS = { min: 32768, max: 60999 } as const;

/**
 * --dry-run: nothing is bound. Ports come from --proxy-port-range as at run time; without a range
 * the kernel would choose, so example ports are numbered from the start of its default ephemeral
 * range (and the output says they are examples).
 */
export function dryRunSocketOpener(): OpenProxySocket {
  let next: number = KERNEL_EPHEMERAL_PORTS.min;
  return async (request: OpenRequest): Promise<ProxySocketHandle> => {
    let endpoints = request.endpoints;
    let affinity = request.affinitySeconds;
    return {
      port: request.port !== 0 ? request.port : next++,
      get endpoints() {
        return endpoints;
      },
      get affinitySeconds() {
        return affinity;
      },
      update(updated: readonly ProxyTarget[], affinitySeconds: number): void {
        endpoints = updated;
        affinity = affinitySeconds;
      },
      close: () => undefined,
    };
  };
}
