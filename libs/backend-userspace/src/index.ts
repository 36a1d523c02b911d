/**
 * Public API of @kube-proxy/backend-userspace: the userspace proxy-mode plugin, its proxier, the
 * proxy sockets and the capture-rule renderer.
 */
export { userspaceBackend, userspaceBackend as default } from './plugin.js';
export type { UserspacePorts } from './plugin.js';
export * from './cleanup.js';
export { UserspaceProxier, listenAddress } from './proxier/userspace-proxier.js';
export type { UserspaceProxierOptions, UserspaceSyncStats } from './proxier/userspace-proxier.js';
export { renderCaptureRules } from './render/capture-rules.js';
export type { CaptureOptions, CapturePortal, CaptureRuleset } from './render/capture-rules.js';
export { EndpointPicker } from './proxy/endpoint-picker.js';
export type { ProxyTarget } from './proxy/endpoint-picker.js';
export { TcpProxySocket } from './proxy/tcp-proxy-socket.js';
export { UdpProxySocket } from './proxy/udp-proxy-socket.js';
export type { ProxyCounters } from './proxy/counters.js';
export { newProxyCounters } from './proxy/counters.js';
