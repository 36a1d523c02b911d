/** The IPVS mode's packet tracer (`kube-proxy trace` / `explain`, /debug/trace). */
export { ipvsTracer } from './ipvs-tracer.js';
export { buildIpvsSnapshot, isIpvsSnapshot, IPVS_TRACE_MODE, type IpvsSnapshot, type IpvsSnapshotTexts } from './ipvs-snapshot.js';
export { IpvsDryRunTextError, ipvsSnapshotFromDryRun } from './ipvs-dry-run.js';
export { readIpvsLive } from './ipvs-live.js';
export { ipvsObjectsAt, ipvsObjectsOf, type ServiceAddress } from './ipvs-objects.js';
export { traceIpvs } from './trace-ipvs.js';
export { IpsetIndex, type IpsetEntry } from './ipset-index.js';
