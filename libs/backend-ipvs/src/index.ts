export { ipvsBackend, ipvsBackend as default } from './plugin.js';
export * from './cleanup.js';
export { buildDesiredIpvsState, DEFAULT_IPVS_SCHEDULER, type IpvsStateOptions } from './state/build-desired-state.js';
export type { DesiredIpvsState, RealServer, VirtualServer } from './state/ipvs-state.js';
export { renderIpsetRestore, renderIpvsadmRestore } from './batch/render-batches.js';
export { diffDesiredStates, type StateDiffBatches } from './batch/diff-batches.js';
