/**
 * Public API of @kube-proxy/backend-userspace: the userspace proxy-mode plugin the host app
 * registers. What benchmarks and test suites drive directly is on `@kube-proxy/backend-
 * userspace/internal`.
 */
export { userspaceBackend, userspaceBackend as default } from './plugin.js';
export type { UserspacePorts } from './plugin.js';
