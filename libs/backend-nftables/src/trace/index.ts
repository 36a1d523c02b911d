/* The nftables packet tracer (`kube-proxy trace` / `explain` in nftables mode). */
export { nftablesTracer, nftSnapshotFromText } from './nftables-tracer.js';
export { parseNftListing, NftListingError } from './listing-parser.js';
export { parseNftScript } from './script-parser.js';
export type { NftRuleset, NftSnapshot, NftChain, NftContainer, NftElement } from './nft-ruleset.js';
