/**
 * Barrel of the iptables rule renderer: pure text generation of upstream kube-proxy's
 * iptables-restore payload, plus the constants the proxier runtime needs to apply it.
 */
export {
  CANARY_TABLES,
  CLEANUP_ONLY_JUMP_CHAINS,
  isServiceChainName,
  JUMP_CHAINS,
  jumpRuleArgs,
  KUBE_CHAINS,
  KUBE_PROXY_CANARY_CHAIN,
  KUBELET_JUMP_CHAINS,
  LARGE_CLUSTER_ENDPOINTS_THRESHOLD,
  makeChainLine,
  NFACCT_COUNTERS,
  SERVICE_CHAIN_PREFIX,
} from './constants.js';
export type { IptablesTable, JumpChain, KubeChain } from './constants.js';
export {
  ChainNameCache,
  lowerProtocol,
  portProtoHash,
  serviceExternalChainName,
  serviceFirewallChainName,
  servicePortEndpointChainName,
  servicePortPolicyClusterChain,
  servicePortPolicyLocalChainName,
} from './chain-names.js';
export type { ServiceChainNames } from './chain-names.js';
export { DiscardLineBuffer, LineBuffer, RenderBuffers, TeeSink } from './line-buffer.js';
export { AppliedChainMemo, AppliedChainUpdate, appliedChainKey } from './applied-chain-memo.js';
export type { LineSink } from './line-buffer.js';
export { computeProbability, formatMasqueradeMark, probability } from './format.js';
export { countEndpoints, isLargeClusterMode, renderRuleset } from './render-ruleset.js';
export type { RenderInput, RenderOptions, RenderResult } from './render-ruleset.js';
