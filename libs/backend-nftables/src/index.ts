/**
 * Public API of @kube-proxy/backend-nftables: the nftables proxy-mode plugin (upstream's
 * pkg/proxy/nftables) the host app registers. What benchmarks and test suites drive directly is on
 * `@kube-proxy/backend-nftables/internal`.
 */
import { nftablesBackend } from './plugin.js';

export { nftablesBackend } from './plugin.js';
export default nftablesBackend;

// The mode's verdict on core's host evidence (the host app fills HostCapabilities.nftables with it).
export { MIN_NFT_VERSION, MIN_NFTABLES_KERNEL, nftablesVerdict, SKIP_KERNEL_CHECK_ENV } from './detect.js';
