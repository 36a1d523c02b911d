import type { KubeProxyConfiguration } from './types.js';
import { parseDurationNs } from './duration.js';
import type { ConfigFieldError } from './errors.js';
import { EMULATED_KUBERNETES_VERSION, featureGateErrors } from './feature-gates.js';
import { proxyModeGateError } from './proxy-mode-gate.js';
import { isDualStackCIDRs, isValidCIDR, isValidIP } from '../semantics/model/ip.js';
import { splitHostPort } from './net-text.js';
import { parsePortRange } from './port-range.js';

/**
 * Upstream's validation.Validate (pkg/proxy/apis/config/validation, v1.31–v1.34), applied to the
 * v1alpha1 shape we keep. Field paths are those of the file (upstream reports internal Go names such
 * as `KubeProxyConfiguration.KubeProxyIPTablesConfiguration.MasqueradeBit`); messages are upstream's.
 *
 * Where upstream validates the mode-specific section through the internal config (the root sync
 * periods come from iptables.*, ipvs.* or nftables.* depending on `mode`), we validate that section.
 * An empty mode is auto-detected here (it may end up iptables or nftables), so both are checked.
 * `mode` itself is free text: the backend registry reports unknown mode names.
 */
export function validateConfiguration(cfg: KubeProxyConfiguration): ConfigFieldError[] {
  const errs: ConfigFieldError[] = [];
  const add = (field: string, message: string, value?: unknown): void => {
    errs.push(value === undefined ? { field, message } : { field, message, value });
  };

  for (const message of featureGateErrors(cfg.featureGates)) add('featureGates', message);

  const mode = cfg.mode;
  const modeGate = featureGateErrors(cfg.featureGates).length === 0 ? proxyModeGateError(mode, cfg.featureGates) : undefined;
  if (modeGate) add('mode', modeGate, mode);
  checkMasqueradeBit(add, 'iptables.masqueradeBit', cfg.iptables.masqueradeBit);
  if (mode === 'nftables' || mode === '') checkMasqueradeBit(add, 'nftables.masqueradeBit', cfg.nftables.masqueradeBit);
  if (mode === 'ipvs') {
    checkSyncPeriods(add, 'ipvs', cfg.ipvs.syncPeriod, cfg.ipvs.minSyncPeriod);
    checkNonNegative(add, 'ipvs.tcpTimeout', cfg.ipvs.tcpTimeout);
    checkNonNegative(add, 'ipvs.tcpFinTimeout', cfg.ipvs.tcpFinTimeout);
    checkNonNegative(add, 'ipvs.udpTimeout', cfg.ipvs.udpTimeout);
    (cfg.ipvs.excludeCIDRs ?? []).forEach((cidr, i) => {
      if (!isValidCIDR(cidr)) add(`ipvs.excludeCIDRs[${i}]`, 'must be a valid CIDR', cidr);
    });
    checkScheduler(add, cfg.ipvs.scheduler);
  } else if (mode === 'nftables') {
    checkSyncPeriods(add, 'nftables', cfg.nftables.syncPeriod, cfg.nftables.minSyncPeriod);
  } else {
    checkSyncPeriods(add, 'iptables', cfg.iptables.syncPeriod, cfg.iptables.minSyncPeriod);
    if (mode === '') checkSyncPeriods(add, 'nftables', cfg.nftables.syncPeriod, cfg.nftables.minSyncPeriod);
  }

  const ct = cfg.conntrack;
  if (ct.maxPerCore < 0) add('conntrack.maxPerCore', 'must be greater than or equal to 0', ct.maxPerCore);
  if (ct.min < 0) add('conntrack.min', 'must be greater than or equal to 0', ct.min);
  checkNonNegative(add, 'conntrack.tcpEstablishedTimeout', ct.tcpEstablishedTimeout);
  checkNonNegative(add, 'conntrack.tcpCloseWaitTimeout', ct.tcpCloseWaitTimeout);
  checkNonNegative(add, 'conntrack.udpTimeout', ct.udpTimeout);
  checkNonNegative(add, 'conntrack.udpStreamTimeout', ct.udpStreamTimeout);
  if (cfg.oomScoreAdj < -1000 || cfg.oomScoreAdj > 1000) {
    add('oomScoreAdj', 'must be within the range [-1000, 1000]', cfg.oomScoreAdj);
  }

  if (cfg.clientConnection.burst < 0) add('clientConnection.burst', 'must be greater than or equal to 0', cfg.clientConnection.burst);

  const configSync = durationNs(cfg.configSyncPeriod);
  if (configSync === undefined) add('configSyncPeriod', 'must be a valid duration', cfg.configSyncPeriod);
  else if (configSync <= 0) add('configSyncPeriod', 'must be greater than 0', cfg.configSyncPeriod);

  if (!isValidIP(cfg.bindAddress)) add('bindAddress', 'not a valid textual representation of an IP address', cfg.bindAddress);
  if (cfg.healthzBindAddress !== '') checkHostPort(add, 'healthzBindAddress', cfg.healthzBindAddress);
  // Upstream validates the metrics address unconditionally (so "" is rejected), unlike healthz.
  checkHostPort(add, 'metricsBindAddress', cfg.metricsBindAddress);

  if (!isValidPortRange(cfg.portRange)) add('portRange', 'must be a valid port range (e.g. 300-2000)', cfg.portRange);
  // Upstream (v1.25) checked it whatever the mode.
  const udpIdle = durationNs(cfg.udpIdleTimeout);
  if (udpIdle === undefined) add('udpIdleTimeout', 'must be a valid duration', cfg.udpIdleTimeout);
  else if (udpIdle <= 0) add('udpIdleTimeout', 'must be greater than zero', cfg.udpIdleTimeout);
  checkNodePortAddresses(add, cfg.nodePortAddresses ?? []);
  checkShowHiddenMetrics(add, cfg.showHiddenMetricsForVersion);
  checkDetectLocal(add, cfg);
  checkLogging(add, cfg);
  cfg.backendPlugins.forEach((spec, i) => {
    if (spec.trim() === '') add(`backendPlugins[${i}]`, 'must not be empty', spec);
  });
  return errs;
}

type Add = (field: string, message: string, value?: unknown) => void;

function durationNs(text: string): number | undefined {
  try {
    return parseDurationNs(text);
  } catch {
    return undefined;
  }
}

function checkMasqueradeBit(add: Add, field: string, bit: number): void {
  if (!Number.isInteger(bit) || bit < 0 || bit > 31) add(field, 'must be within the range [0, 31]', bit);
}

function checkSyncPeriods(add: Add, section: string, sync: string, minSync: string): void {
  const s = durationNs(sync);
  const m = durationNs(minSync);
  if (s === undefined) add(`${section}.syncPeriod`, 'must be a valid duration', sync);
  else if (s <= 0) add(`${section}.syncPeriod`, 'must be greater than 0', sync);
  if (m === undefined) add(`${section}.minSyncPeriod`, 'must be a valid duration', minSync);
  else if (m < 0) add(`${section}.minSyncPeriod`, 'must be greater than or equal to 0', minSync);
  if (s !== undefined && m !== undefined && m > s) {
    add(`${section}.syncPeriod`, `must be greater than or equal to ${section}.minSyncPeriod`, minSync);
  }
}

function checkNonNegative(add: Add, field: string, duration: string): void {
  const ns = durationNs(duration);
  if (ns === undefined) add(field, 'must be a valid duration', duration);
  else if (ns < 0) add(field, 'must be greater than or equal to 0', duration);
}

/** The IPVS schedulers the Linux kernel provides (ip_vs_<name> modules); "" means rr. */
export const IPVS_SCHEDULERS = ['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'fo', 'ovf', 'mh', 'twos'] as const;

function checkScheduler(add: Add, scheduler: string): void {
  if (scheduler !== '' && !(IPVS_SCHEDULERS as readonly string[]).includes(scheduler)) {
    add('ipvs.scheduler', `must be one of ${IPVS_SCHEDULERS.join(', ')}, blank means the default algorithm method (currently rr)`, scheduler);
  }
}

function checkHostPort(add: Add, field: string, input: string): void {
  let host: string;
  let port: string;
  try {
    ({ host, port } = splitHostPort(input));
  } catch {
    add(field, 'must be IP:port', input);
    return;
  }
  if (!isValidIP(host)) add(field, 'must be a valid IP', host);
  const p = /^[+-]?\d+$/.test(port) ? Number(port) : NaN;
  if (!(p >= 1 && p <= 65535)) add(field, 'must be a valid port', port);
}

function isValidPortRange(text: string): boolean {
  try {
    parsePortRange(text);
    return true;
  } catch {
    return false;
  }
}

function checkNodePortAddresses(add: Add, addresses: readonly string[]): void {
  for (let i = 0; i < addresses.length; i++) {
    const a = addresses[i];
    if (a === 'primary') {
      if (i !== 0 || addresses.length !== 1) add(`nodePortAddresses[${i}]`, "can't use both 'primary' and CIDRs", a);
      break;
    }
    if (!isValidCIDR(a)) add(`nodePortAddresses[${i}]`, 'must be a valid CIDR', a);
  }
}

/** Only the previous minor release may be shown (metrics.ValidateShowHiddenMetricsVersion). */
function checkShowHiddenMetrics(add: Add, version: string): void {
  if (version === '') return;
  const m = /^(\d+)\.(\d+)$/.exec(version);
  const { major, minor } = EMULATED_KUBERNETES_VERSION;
  const previous = `${major}.${minor - 1}`;
  if (!m) {
    add('showHiddenMetricsForVersion', `version ${JSON.stringify(version)} is not in the format "<major>.<minor>"`, version);
  } else if (Number(m[1]) !== major || Number(m[2]) !== minor - 1) {
    add('showHiddenMetricsForVersion', `must be omitted or have the value '${previous}'. Only the previous minor version is allowed`, version);
  }
}

const LOCAL_MODES = ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix', ''];

function checkDetectLocal(add: Add, cfg: KubeProxyConfiguration): void {
  const mode = cfg.detectLocalMode as string;
  if (!LOCAL_MODES.includes(mode)) {
    add('detectLocalMode', `Unsupported value: ${JSON.stringify(mode)}: supported values: ${LOCAL_MODES.map((m) => JSON.stringify(m)).join(', ')}`, mode);
  }
  if (mode === 'BridgeInterface' && cfg.detectLocal.bridgeInterface === '') {
    add('detectLocal.bridgeInterface', 'must not be empty when detectLocalMode is BridgeInterface');
  }
  if (mode === 'InterfaceNamePrefix' && cfg.detectLocal.interfaceNamePrefix === '') {
    add('detectLocal.interfaceNamePrefix', 'must not be empty when detectLocalMode is InterfaceNamePrefix');
  }
  // The cluster CIDRs matter (and are checked) in ClusterCIDR mode, which is also what "" means.
  if ((mode === 'ClusterCIDR' || mode === '') && cfg.clusterCIDR !== '') checkClusterCIDR(add, cfg.clusterCIDR);
}

function checkClusterCIDR(add: Add, value: string): void {
  const cidrs = value.split(',');
  const pairMessage = 'must be either a single CIDR or a dual-stack pair of CIDRs (e.g. 10.100.0.0/16,fde4:8dba:82e1::/48)';
  if (cidrs.length > 2) {
    add('clusterCIDR', pairMessage, value);
    return;
  }
  let allValid = true;
  cidrs.forEach((cidr) => {
    if (!isValidCIDR(cidr)) {
      allValid = false;
      add('clusterCIDR', `${JSON.stringify(cidr)} must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)`, cidr);
    }
  });
  if (allValid && cidrs.length === 2 && !isDualStackCIDRs(cidrs)) add('clusterCIDR', pairMessage, value);
}

function checkLogging(add: Add, cfg: KubeProxyConfiguration): void {
  const format = cfg.logging.format as string;
  if (format !== 'text' && format !== 'json') {
    add('logging.format', `Unsupported value: ${JSON.stringify(format)}: supported values: "json", "text"`, format);
  }
  if (!Number.isInteger(cfg.logging.verbosity) || cfg.logging.verbosity < 0) {
    add('logging.verbosity', 'must be greater than or equal to 0', cfg.logging.verbosity);
  }
  const flush = durationNs(cfg.logging.flushFrequency);
  if (flush === undefined || flush <= 0) add('logging.flushFrequency', 'must be greater than 0', cfg.logging.flushFrequency);
}
