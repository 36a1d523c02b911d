/**
 * Public API of @kube-proxy/backend-iptables: the iptables proxy-mode plugin the host app
 * registers. What benchmarks and test suites drive directly is on `@kube-proxy/backend-
 * iptables/internal`.
 */
import { iptablesBackend } from './plugin.js';

export { iptablesBackend } from './plugin.js';
export default iptablesBackend;
