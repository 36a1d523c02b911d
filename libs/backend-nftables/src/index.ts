/**
 * Public API of @kube-proxy/backend-nftables: the nftables proxy-mode plugin (upstream's
 * pkg/proxy/nftables), its renderer, the transaction planner, and the in-memory table behind
 * --dry-run and the tests.
 */
import { nftablesBackend } from './plugin.js';

export { nftablesBackend } from './plugin.js';
export default nftablesBackend;

export * from './names/index.js';
export * from './nft/nft-objects.js';
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
export { COLD_START_BATCH, coldStartBatches } from './proxier/cold-start.js';
export { NftablesProxier, masqueradeMarkOf, type NftablesProxierOptions, type NftablesProxierStats } from './proxier/nftables-proxier.js';
export { cleanupNftables } from './cleanup.js';
