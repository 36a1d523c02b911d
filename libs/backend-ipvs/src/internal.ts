/**
 * @kube-proxy/backend-ipvs/internal: the pieces of the IPVS proxy-mode plugin that the workspace's
 * benchmarks, fuzzers and end-to-end suites drive directly (renderer, proxier, kernel clients, in-
 * memory models). Not a stable API: the host app and third-party code use the plugin from the
 * package's main entry.
 */
export { cleanupIpvs, DUMMY_DEVICE, IPSET_PREFIX, IPVS_CHAINS, IPVS_JUMPS } from './cleanup.js';
export { buildDesiredIpvsState, DEFAULT_IPVS_SCHEDULER, type IpvsStateOptions } from './state/build-desired-state.js';
export type { DesiredIpvsState, RealServer, VirtualServer } from './state/ipvs-state.js';
// The incremental pieces a partial sync is made of (the IPVS benchmark times them as the proxier runs them).
export { IpvsStateIndex, type IndexChange } from './state/ipvs-state-index.js';
export { AppliedIpvs, type PartialIpvs } from './proxier/applied-ipvs.js';
export { kernelTarget, type KernelTarget, type KernelTargetInput } from './proxier/kernel-target.js';
export { changedServicePorts } from './proxier/changed-ports.js';
export { partialBatches, type PartialBatches } from './proxier/partial-batches.js';
export { renderIpsetRestore, renderIpvsadmRestore } from './batch/render-batches.js';
export { diffDesiredStates, type StateDiffBatches } from './batch/diff-batches.js';
// The kernel clients (host tools, in-memory kernel) and the parsers of the tools' output.
export {
  guardPayload,
  HostIpvsKernel,
  type HostIpvsKernelOptions,
  IpAddrParseError,
  IpsetSaveParseError,
  IPVS_SCHEDULERS,
  IPVSADM_DEFAULT_SCHEDULER,
  type IpvsadmCommand,
  type IpvsadmLine,
  IpvsadmLineError,
  IpvsadmSaveParseError,
  type IpvsadmService,
  type IpvsadmServiceOptions,
  type IpvsConnections,
  type IpvsKernel,
  type IpvsKernelCall,
  IpvsKernelCommandError,
  type IpvsKernelDump,
  type IpvsKernelMethod,
  isMissingDevice,
  KUBE_IPVS_DEVICE,
  type LinkBatchLine,
  linkBatchLines,
  type LinkChange,
  MemoryIpvsKernel,
  parseIpAddrShow,
  parseIpsetSave,
  parseIpvsadmLine,
  parseIpvsadmSave,
  parseLinkBatchLine,
  parseProcNetIpVs,
  PROC_NET_IP_VS,
  ProcNetIpVsParseError,
  type RealServerConnections,
} from './kernel/index.js';
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
// The packet tracer of IPVS mode (the plugin's `tracer`), its snapshots and the lookups explain uses.
export { buildIpvsSnapshot, IpsetIndex, ipvsObjectsAt, ipvsObjectsOf, ipvsSnapshotFromDryRun, ipvsTracer, isIpvsSnapshot, readIpvsLive, traceIpvs, type IpsetEntry, type IpvsSnapshot, type IpvsSnapshotTexts, type ServiceAddress } from './trace/index.js';
