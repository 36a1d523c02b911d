export type { HostCapabilities, IptablesVariant, ToolInfo } from './types.js';
export { detectHostCapabilities, systemIptablesVariant, MIN_IPTABLES_RANDOM_FULLY, type DetectOptions } from './detect.js';
export { parseVersion, compareVersions, versionAtLeast, formatVersion, type Version } from './version.js';
export { MIN_IPSET_VERSION, knownSchedulers } from './ipvs-verdict.js';
export { MIN_NFTABLES_KERNEL, MIN_NFT_VERSION, SKIP_KERNEL_CHECK_ENV } from './nftables-verdict.js';
