/**
 * Public API of @kube-proxy/backend-iptables: the iptables proxy-mode plugin, the pure rule renderer,
 * and the in-memory iptables model behind --dry-run.
 */
import { iptablesBackend } from './plugin.js';

export { iptablesBackend, createIptablesProvider } from './plugin.js';
export default iptablesBackend;

// The renderer's public API.
export * from './render/index.js';

// The in-memory iptables model behind --dry-run (the iptables runner itself lives in core).
export {
  BUILTIN_CHAINS,
  InMemoryRestoreError,
  InMemoryTables,
  InMemoryTablesError,
} from './dry-run/in-memory-tables.js';
export type { InMemoryRestoreOptions, InMemoryRule } from './dry-run/in-memory-tables.js';
export { DryRunIptables } from './dry-run/dry-run-iptables.js';

// Proxier pieces.
export { IptablesProxier, FULL_SYNC_PERIOD_MS } from './proxier/iptables-proxier.js';
export type { IptablesProxierOptions, IptablesProxierStats } from './proxier/iptables-proxier.js';
export type { SyncObservers } from './proxier/sync-reporting.js';
export { CanaryMonitor, IPTABLES_FLUSH_POLL_MS, IPTABLES_FLUSH_TIMEOUT_MS } from './proxier/canary-monitor.js';
export { selectLocalDetector } from './proxier/local-detector.js';
export { parseNodePortAddresses, resolveNodePortAddresses } from './proxier/node-port-addresses.js';
export type { NodePortAddresses, NodePortAddressSelection } from './proxier/node-port-addresses.js';
export { ConntrackCleaner, endpointIP, NO_CONNECTION_TO_DELETE } from './conntrack/conntrack-cleaner.js';
export { cleanupAllIptables, cleanupIptables, OWNED_CHAINS } from './cleanup.js';
export { NfacctClient, NfacctCounters, NFACCT_READ_CACHE_MS, parseNfacctList } from './nfacct/index.js';
export type { NfacctCounterValue, NfacctPackets, NfacctPresence } from './nfacct/index.js';
