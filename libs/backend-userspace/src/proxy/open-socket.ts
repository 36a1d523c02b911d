import type { IPFamily, Logger } from '@kube-proxy/core';
import type { ProxyCounters } from './counters.js';
import type { EndpointPicker } from './endpoint-picker.js';
import type { OpenProxySocket, ProxySocketHandle } from './socket-handle.js';
import { TcpProxySocket } from './tcp-proxy-socket.js';
import { UdpProxySocket } from './udp-proxy-socket.js';

export interface SocketOptions {
  readonly family: IPFamily;
  /** --bind-address: where proxy sockets listen. */
  readonly listenIP: string;
  readonly udpIdleTimeoutMs: number;
  readonly counters: ProxyCounters;
  readonly logger: Logger;
}

/** Opens real proxy sockets (TCP server or UDP socket) on the listen address. */
export function realSocketOpener(options: SocketOptions): OpenProxySocket {
  return async (protocol: 'TCP' | 'UDP', picker: EndpointPicker, port: number): Promise<ProxySocketHandle> => {
    const socket =
      protocol === 'TCP'
        ? new TcpProxySocket(picker, options.counters, options.logger)
        : new UdpProxySocket(options.family, picker, options.udpIdleTimeoutMs, options.counters, options.logger);
    try {
      await socket.listen(options.listenIP, port);
    } catch (err) {
      socket.close();
      throw err;
    }
    return socket;
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
  return async (_protocol: 'TCP' | 'UDP', _picker: EndpointPicker, port: number): Promise<ProxySocketHandle> => {
    const chosen = port !== 0 ? port : next++;
    return { port: chosen, close: () => undefined };
  };
}
