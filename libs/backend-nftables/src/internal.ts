/**
 * @kube-proxy/backend-nftables/internal: the pieces of the nftables proxy-mode plugin (upstream's
 * pkg/proxy/nftables) that the workspace's benchmarks, fuzzers and end-to-end suites drive directly
 * (renderer, proxier, kernel clients, in-memory models). Not a stable API: the host app and third-
 * party code use the plugin from the package's main entry.
 */
export {
  AFFINITY_PREFIX,
  CLUSTER_POLICY_PREFIX,
  ENDPOINT_PREFIX,
  endpointNameBase,
  EXTERNAL_PREFIX,
  FIREWALL_PREFIX,
  hashAndTruncate,
  isAffinitySetName,
  isServiceChainName,
  LOCAL_POLICY_PREFIX,
  NAME_LENGTH_MAX,
  NameCache,
  servicePortNameBase,
} from './names/index.js';
export {
  type BaseChainHook,
  chainBody,
  type ChainDecl,
  elementBody,
  type ElementSpec,
  familyOf,
  mapBody,
  type MapDecl,
  type NftFamily,
  quoted,
  ruleText,
  setBody,
  type SetDecl,
  TABLE_COMMENT,
  TABLE_NAME,
} from './nft/nft-objects.js';
export { NftTransaction, type OperationCounts } from './nft/nft-transaction.js';
export { MemoryNftTable, NftTransactionError } from './nft/memory-table.js';
export { NftRunError, type NftInterface } from './kernel/nft-interface.js';
export { HostNft } from './kernel/host-nft.js';
export { MemoryNft } from './kernel/memory-nft.js';
export { renderServicePort, type ServicePortRender, type RenderContext, type ChainContent, type PlacedElement, type AffinitySet } from './render/service-port-render.js';
export { tableSkeleton, type TableSkeleton, type SkeletonOptions } from './render/table-skeleton.js';
export { nftLocalMatch, type NftLocalMatch } from './render/local-detector-nft.js';
export { CHAIN, MAP, SET } from './render/table-names.js';
export { TableSync, STALE_CHAIN_DELAY_MS, type SyncStep } from './proxier/table-sync.js';
export { COLD_START_BATCH, COLD_START_MAX_SERVICES, coldStartBatches } from './proxier/cold-start.js';
export { NftablesProxier, masqueradeMarkOf, type NftablesProxierOptions, type NftablesProxierStats } from './proxier/nftables-proxier.js';
export { cleanupNftables } from './cleanup.js';
// The packet tracer (also the plugin's `tracer`): benchmarks parse and trace with it directly.
export { nftablesTracer, nftSnapshotFromText, parseNftListing, parseNftScript, NftListingError, type NftRuleset, type NftSnapshot } from './trace/index.js';
