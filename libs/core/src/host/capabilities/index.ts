export type { HostCapabilities, HostEvidence, IptablesVariant, ModeCapability, ModeVerdict, ProbedTool, ToolInfo } from './types.js';
export { detectHostCapabilities, systemIptablesVariant, MIN_IPTABLES_RANDOM_FULLY, type DetectOptions } from './detect.js';
export { parseVersion, compareVersions, versionAtLeast, formatVersion, type Version } from './version.js';
export type { KconfigValue, KernelEvidence } from './kernel-evidence.js';
export { notInstalled, safeRun, type ToolProbe } from './tool-probe.js';
