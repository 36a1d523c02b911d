/**
 * Public API of @kube-proxy/backend-iptables: the iptables proxy-mode plugin, the pure rule renderer,
 * and the proxier (the in-memory iptables behind --dry-run, conntrack cleanup and local-traffic
 * detection live in core, shared with the IPVS backend).
 */
import { iptablesBackend } from './plugin.js';

export { iptablesBackend } from './plugin.js';
export default iptablesBackend;

// The renderer's public API.
export * from './render/index.js';

// Proxier pieces.
export { IptablesProxier } from './proxier/iptables-proxier.js';
export type { IptablesProxierOptions, IptablesProxierStats } from './proxier/iptables-proxier.js';
export { canaryFlushMonitor, IPTABLES_FLUSH_POLL_MS, IPTABLES_FLUSH_TIMEOUT_MS } from './proxier/canary-monitor.js';
export { cleanupAllIptables, cleanupIptables, OWNED_CHAINS } from './cleanup.js';
export { NfacctClient, NfacctCounters, NFACCT_READ_CACHE_MS, parseNfacctList } from './nfacct/index.js';
export type { NfacctCounterValue, NfacctPackets, NfacctPresence } from './nfacct/index.js';
