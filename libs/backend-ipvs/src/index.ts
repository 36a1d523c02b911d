export { ipvsBackend, ipvsBackend as default } from './plugin.js';
export * from './cleanup.js';
export { buildDesiredIpvsState, DEFAULT_IPVS_SCHEDULER, type IpvsStateOptions } from './state/build-desired-state.js';
export type { DesiredIpvsState, RealServer, VirtualServer } from './state/ipvs-state.js';
export { renderIpsetRestore, renderIpvsadmRestore } from './batch/render-batches.js';
export { diffDesiredStates, type StateDiffBatches } from './batch/diff-batches.js';
// The kernel clients (host tools, in-memory kernel) and the parsers of the tools' output.
export * from './kernel/index.js';
export type { IpvsadmSchedulerFlag } from './state/ipvs-state.js';
// The iptables skeleton of IPVS mode (restore payload, owned chains, jump rules).
export {
  IPVS_IPTABLES_CHAINS,
  IPVS_IPTABLES_JUMPS,
  lbNoNodeAccessEntries,
  masqueradeMark,
  ownedChainsOf,
  renderIpvsIptables,
  type IpvsIptablesOptions,
  type IpvsIptablesPayload,
  type IpvsJumpRule,
  type IpvsOwnedChain,
  type LbNoNodeAccessEntry,
} from './iptables/index.js';
