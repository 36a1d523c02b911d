/**
 * Public API of @kube-proxy/userspace-proxy: the userspace proxy engine. Userspace mode runs one
 * proxy socket per service port behind its capture rules; nftables mode runs TCP ones on the
 * loopback NodePorts (KEP-6032). Which endpoints a socket may use is decided by core's service
 * semantics in the caller; the engine only picks among them (round robin, ClientIP affinity),
 * dials with failover and copies bytes.
 */
export type { ProxyCounters } from './counters.js';
export { newProxyCounters } from './counters.js';
export { EndpointPicker } from './endpoint-picker.js';
export type { ProxyTarget } from './endpoint-picker.js';
export { dialTCP, dialWithFailover, ENDPOINT_DIAL_TIMEOUTS_MS, ENDPOINT_READ_MAX, ENDPOINT_READ_MIN } from './dial.js';
export type { DialOutcome, EndpointSocket } from './dial.js';
export { FdBudget, proxyFdBudget, RESERVED_FDS } from './fd-budget.js';
export { bindUdp, listenOn } from './listen.js';
export { dryRunSocketOpener, KERNEL_EPHEMERAL_PORTS, localSocketOpener } from './open-socket.js';
export type { SocketOptions } from './open-socket.js';
export { ProxyPortAllocator } from './port-allocator.js';
export type { OpenProxySocket, OpenRequest, ProxySocketHandle } from './socket-handle.js';
export { TcpProxySocket } from './tcp-proxy-socket.js';
export { UdpProxySocket } from './udp-proxy-socket.js';
