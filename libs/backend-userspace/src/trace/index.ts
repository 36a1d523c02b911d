/** The userspace mode's packet tracer (`kube-proxy trace` / `explain`, /debug/trace). */
export { userspaceTracer } from './userspace-tracer.js';
export { isUserspaceSnapshot, USERSPACE_TRACE_MODE, userspaceSnapshotFromDryRun, type UserspaceSnapshot } from './userspace-snapshot.js';
export { readUserspaceLive } from './userspace-live.js';
export { traceUserspace } from './trace-userspace.js';
export { parseProxySocketTable, type ProxySocketRow, type ProxySocketTable } from './proxy-socket-table.js';
