/**
 * The IPVS backend's kernel clients: the IpvsKernel interface, the host implementation over core's
 * CommandExecutor, the in-memory kernel (dry-run and specs), and the parsers of the tools' output.
 */
export { KUBE_IPVS_DEVICE, type IpvsConnections, type IpvsKernel, type RealServerConnections } from './ipvs-kernel.js';
export { HostIpvsKernel, PROC_NET_IP_VS, type HostIpvsKernelOptions } from './host-ipvs-kernel.js';
export { MemoryIpvsKernel, type IpvsKernelCall, type IpvsKernelDump, type IpvsKernelMethod } from './memory-ipvs-kernel.js';
export { IpvsKernelCommandError } from './kernel-command-error.js';
export { IpvsadmSaveParseError, parseIpvsadmSave } from './ipvsadm-save.js';
export { IPVSADM_DEFAULT_SCHEDULER, IpvsadmLineError, parseIpvsadmLine, type IpvsadmCommand, type IpvsadmLine, type IpvsadmService, type IpvsadmServiceOptions } from './ipvsadm-line.js';
export { ProcNetIpVsParseError, parseProcNetIpVs } from './proc-net-ip-vs.js';
export { IpsetSaveParseError, parseIpsetSave } from './ipset-save.js';
export { IpAddrParseError, isMissingDevice, parseIpAddrShow } from './ip-addr.js';
export { linkBatchLines, parseLinkBatchLine, type LinkBatchLine, type LinkChange } from './link-batch.js';
export { IPVS_SCHEDULERS } from './memory-ipvs-table.js';
export { guardPayload } from './payload-guard.js';
