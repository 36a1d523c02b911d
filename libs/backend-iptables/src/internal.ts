/**
 * @kube-proxy/backend-iptables/internal: the pieces of the iptables proxy-mode plugin that the
 * workspace's benchmarks, fuzzers and end-to-end suites drive directly (renderer, proxier, kernel
 * clients, in-memory models). Not a stable API: the host app and third-party code use the plugin
 * from the package's main entry.
 */
// The renderer's public API.
export {
  appliedChainKey,
  AppliedChainMemo,
  AppliedChainUpdate,
  CANARY_TABLES,
  ChainNameCache,
  CLEANUP_ONLY_JUMP_CHAINS,
  computeProbability,
  countEndpoints,
  DiscardLineBuffer,
  formatMasqueradeMark,
  type IptablesTable,
  isLargeClusterMode,
  isServiceChainName,
  JUMP_CHAINS,
  type JumpChain,
  jumpRuleArgs,
  KUBE_CHAINS,
  KUBE_PROXY_CANARY_CHAIN,
  type KubeChain,
  KUBELET_JUMP_CHAINS,
  LARGE_CLUSTER_ENDPOINTS_THRESHOLD,
  LineBuffer,
  type LineSink,
  lowerProtocol,
  makeChainLine,
  NFACCT_COUNTERS,
  portProtoHash,
  probability,
  RenderBuffers,
  type RenderInput,
  type RenderOptions,
  type RenderResult,
  renderRuleset,
  SERVICE_CHAIN_PREFIX,
  type ServiceChainNames,
  serviceExternalChainName,
  serviceFirewallChainName,
  servicePortEndpointChainName,
  servicePortPolicyClusterChain,
  servicePortPolicyLocalChainName,
  TeeSink,
} from './render/index.js';

// Proxier pieces.
export { IptablesProxier } from './proxier/iptables-proxier.js';
export type { IptablesProxierOptions, IptablesProxierStats } from './proxier/iptables-proxier.js';
export { canaryFlushMonitor, IPTABLES_FLUSH_POLL_MS, IPTABLES_FLUSH_TIMEOUT_MS } from './proxier/canary-monitor.js';
export { cleanupAllIptables, cleanupIptables, OWNED_CHAINS } from './cleanup.js';
export { NfacctClient, NfacctCounters, NFACCT_READ_CACHE_MS, parseNfacctList } from './nfacct/index.js';
export type { NfacctCounterValue, NfacctPackets, NfacctPresence } from './nfacct/index.js';

// `kube-proxy trace` / `explain` for the iptables mode (also reached as the plugin's `tracer`).
export { iptablesTracer, type IptablesSnapshot } from './trace/index.js';
