/**
 * Public API of @kube-proxy/backend-ipvs: the IPVS proxy-mode plugin the host app registers. What
 * benchmarks and test suites drive directly is on `@kube-proxy/backend-ipvs/internal`.
 */
export { ipvsBackend, ipvsBackend as default } from './plugin.js';
// The mode's verdict on core's host evidence (the host app fills HostCapabilities.ipvs with it).
export { ipvsVerdict, knownSchedulers, MIN_IPSET_VERSION } from './detect.js';
