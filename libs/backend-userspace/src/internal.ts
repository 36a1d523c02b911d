/**
 * @kube-proxy/backend-userspace/internal: the pieces of the userspace proxy-mode plugin that the
 * workspace's benchmarks, fuzzers and end-to-end suites drive directly (renderer, proxier, kernel
 * clients, in-memory models). Not a stable API: the host app and third-party code use the plugin
 * from the package's main entry.
 */
export { cleanupUserspace, USERSPACE_CHAINS, USERSPACE_JUMPS } from './cleanup.js';
export { UserspaceProxier, listenAddress } from './proxier/userspace-proxier.js';
export type { UserspaceProxierOptions, UserspaceSyncStats } from './proxier/userspace-proxier.js';
export { renderCaptureRules } from './render/capture-rules.js';
export type { CaptureOptions, CapturePortal, CaptureRuleset } from './render/capture-rules.js';
export { EndpointPicker, type ProxyTarget, TcpProxySocket, UdpProxySocket, type ProxyCounters, newProxyCounters } from '@kube-proxy/userspace-proxy';
// The packet tracer of userspace mode (the plugin's `tracer`) and its snapshots.
export { isUserspaceSnapshot, parseProxySocketTable, readUserspaceLive, traceUserspace, userspaceSnapshotFromDryRun, userspaceTracer, type ProxySocketRow, type ProxySocketTable, type UserspaceSnapshot } from './trace/index.js';
