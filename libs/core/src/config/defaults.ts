import type { KubeProxyConfiguration } from './types.js';
import { parseDurationNs } from './duration.js';
import { ipFamilyOf } from '../semantics/model/ip.js';
import { appendPortIfNeeded } from './net-text.js';

/**
 * A configuration as read from a file before defaulting: any field may be missing. `undefined` (or
 * null, for scalars) plays the role of upstream's nil pointer / zero value.
 */
export type KubeProxyConfigurationInput = DeepPartial<KubeProxyConfiguration>;

export type DeepPartial<T> = T extends readonly (infer U)[]
  ? readonly U[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> | null }
    : T;

export const API_VERSION = 'kubeproxy.config.k8s.io/v1alpha1';
export const KIND = 'KubeProxyConfiguration';

/** ports.ProxyHealthzPort / ports.ProxyStatusPort upstream. */
export const DEFAULT_HEALTHZ_PORT = 10256;
export const DEFAULT_METRICS_PORT = 10249;
/** qos.KubeProxyOOMScoreAdj: kube-proxy should be among the last things the OOM killer picks. */
export const DEFAULT_OOM_SCORE_ADJ = -999;

/** The fully defaulted configuration, as `--write-config-to` would print it with no flags. */
export function defaultConfiguration(): KubeProxyConfiguration {
  return applyDefaults({});
}

/**
 * Upstream's v1alpha1 SetDefaults_KubeProxyConfiguration, field by field. Note the two kinds of
 * "unset" it distinguishes: pointer fields (masqueradeBit, localhostNodePorts, oomScoreAdj, the
 * conntrack limits and TCP timeouts) are defaulted only when absent, so an explicit 0 stays 0; plain
 * fields (sync periods, qps, burst, content type, addresses) are defaulted when zero, so e.g.
 * `iptables.minSyncPeriod: 0s` in a file still becomes 1s, exactly as upstream.
 */
export function applyDefaults(input: KubeProxyConfigurationInput): KubeProxyConfiguration {
  const i = input;
  const bindAddress = str(i.bindAddress) || '0.0.0.0';
  const servers = serverAddressDefaults(bindAddress, str(i.healthzBindAddress), str(i.metricsBindAddress));
  const dl = i.detectLocal ?? {};

  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    featureGates: { ...(i.featureGates ?? {}) } as Record<string, boolean>,
    clientConnection: clientConnectionDefaults(i.clientConnection ?? {}),
    logging: loggingDefaults(i.logging ?? {}),
    hostnameOverride: str(i.hostnameOverride),
    bindAddress,
    healthzBindAddress: servers.healthzBindAddress,
    metricsBindAddress: servers.metricsBindAddress,
    bindAddressHardFail: bool(i.bindAddressHardFail),
    enableProfiling: bool(i.enableProfiling),
    showHiddenMetricsForVersion: str(i.showHiddenMetricsForVersion),
    mode: str(i.mode),
    iptables: iptablesDefaults(i.iptables ?? {}),
    ipvs: ipvsDefaults(i.ipvs ?? {}),
    nftables: nftablesDefaults(i.nftables ?? {}),
    winkernel: {
      networkName: '',
      sourceVip: '',
      enableDSR: false,
      rootHnsEndpointName: '',
      forwardHealthCheckVip: false,
      ...((i.winkernel ?? {}) as Record<string, unknown>),
    },
    detectLocalMode: str(i.detectLocalMode) as KubeProxyConfiguration['detectLocalMode'],
    detectLocal: {
      bridgeInterface: str(dl.bridgeInterface),
      interfaceNamePrefix: str(dl.interfaceNamePrefix),
    },
    clusterCIDR: str(i.clusterCIDR),
    nodePortAddresses: i.nodePortAddresses ? [...i.nodePortAddresses] : null,
    oomScoreAdj: i.oomScoreAdj ?? DEFAULT_OOM_SCORE_ADJ,
    conntrack: conntrackDefaults(i.conntrack ?? {}),
    configSyncPeriod: durationOr(i.configSyncPeriod, '15m0s'),
    portRange: str(i.portRange),
    udpIdleTimeout: durationOr(i.udpIdleTimeout, '250ms'),
    windowsRunAsService: bool(i.windowsRunAsService),
    backendPlugins: [...(i.backendPlugins ?? [])],
  };
}

/** One section of the input config before defaulting (absent sections are `{}`). */
type Section<K extends keyof KubeProxyConfiguration> = NonNullable<KubeProxyConfigurationInput[K]>;

/**
 * The health and metrics servers listen on the bind address's family: all addresses for healthz,
 * loopback for metrics, unless given (a given host without a port gets the default port).
 */
function serverAddressDefaults(bindAddress: string, healthz: string, metrics: string): { healthzBindAddress: string; metricsBindAddress: string } {
  const v4 = ipFamilyOf(bindAddress) === 'IPv4';
  const healthzHost = v4 ? '0.0.0.0' : '[::]';
  const metricsHost = v4 ? '127.0.0.1' : '[::1]';
  return {
    healthzBindAddress: healthz === '' ? `${healthzHost}:${DEFAULT_HEALTHZ_PORT}` : appendPortIfNeeded(healthz, DEFAULT_HEALTHZ_PORT),
    metricsBindAddress: metrics === '' ? `${metricsHost}:${DEFAULT_METRICS_PORT}` : appendPortIfNeeded(metrics, DEFAULT_METRICS_PORT),
  };
}

function clientConnectionDefaults(cc: Section<'clientConnection'>): KubeProxyConfiguration['clientConnection'] {
  return {
    kubeconfig: str(cc.kubeconfig),
    acceptContentTypes: str(cc.acceptContentTypes),
    contentType: str(cc.contentType) || 'application/vnd.kubernetes.protobuf',
    qps: num(cc.qps) || 5,
    burst: num(cc.burst) || 10,
  };
}

function loggingDefaults(log: Section<'logging'>): KubeProxyConfiguration['logging'] {
  return {
    format: (str(log.format) || 'text') as KubeProxyConfiguration['logging']['format'],
    flushFrequency: durationOr(log.flushFrequency, '5s'),
    verbosity: num(log.verbosity),
    options: defaultLoggingOptions(log.options as Record<string, unknown> | null | undefined),
  };
}

function iptablesDefaults(ipt: Section<'iptables'>): KubeProxyConfiguration['iptables'] {
  return {
    masqueradeBit: ipt.masqueradeBit ?? 14,
    masqueradeAll: bool(ipt.masqueradeAll),
    localhostNodePorts: ipt.localhostNodePorts ?? true,
    syncPeriod: durationOr(ipt.syncPeriod, '30s'),
    minSyncPeriod: durationOr(ipt.minSyncPeriod, '1s'),
  };
}

function ipvsDefaults(ipvs: Section<'ipvs'>): KubeProxyConfiguration['ipvs'] {
  return {
    syncPeriod: durationOr(ipvs.syncPeriod, '30s'),
    // Upstream v1alpha1 defaulting leaves ipvs.minSyncPeriod alone.
    minSyncPeriod: durationOr(ipvs.minSyncPeriod, '0s'),
    scheduler: str(ipvs.scheduler),
    excludeCIDRs: ipvs.excludeCIDRs ? [...ipvs.excludeCIDRs] : null,
    strictARP: bool(ipvs.strictARP),
    tcpTimeout: durationOr(ipvs.tcpTimeout, '0s'),
    tcpFinTimeout: durationOr(ipvs.tcpFinTimeout, '0s'),
    udpTimeout: durationOr(ipvs.udpTimeout, '0s'),
  };
}

function nftablesDefaults(nft: Section<'nftables'>): KubeProxyConfiguration['nftables'] {
  return {
    masqueradeBit: nft.masqueradeBit ?? 14,
    masqueradeAll: bool(nft.masqueradeAll),
    syncPeriod: durationOr(nft.syncPeriod, '30s'),
    minSyncPeriod: durationOr(nft.minSyncPeriod, '1s'),
  };
}

function conntrackDefaults(ct: Section<'conntrack'>): KubeProxyConfiguration['conntrack'] {
  return {
    maxPerCore: ct.maxPerCore ?? 32 * 1024,
    min: ct.min ?? 128 * 1024,
    // Absent ⇒ default; an explicit "0s" means "leave the kernel's value alone".
    tcpEstablishedTimeout: ct.tcpEstablishedTimeout == null ? '24h0m0s' : durationOr(ct.tcpEstablishedTimeout, '0s'),
    tcpCloseWaitTimeout: ct.tcpCloseWaitTimeout == null ? '1h0m0s' : durationOr(ct.tcpCloseWaitTimeout, '0s'),
    tcpBeLiberal: bool(ct.tcpBeLiberal),
    udpTimeout: durationOr(ct.udpTimeout, '0s'),
    udpStreamTimeout: durationOr(ct.udpStreamTimeout, '0s'),
  };
}

/** The zero-valued per-format options upstream always serialises (resource.Quantity "0"). */
function defaultLoggingOptions(options: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const given = options ?? {};
  const merged: Record<string, unknown> = { ...given };
  for (const format of ['json', 'text']) {
    const current = (given[format] ?? {}) as Record<string, unknown>;
    merged[format] = { infoBufferSize: '0', ...current };
  }
  return merged;
}

function str(v: string | null | undefined): string {
  return v ?? '';
}

function num(v: number | null | undefined): number {
  return v ?? 0;
}

function bool(v: boolean | null | undefined): boolean {
  return v ?? false;
}

/** Zero or missing durations take the default (upstream's `if d.Duration == 0`). */
function durationOr(v: string | null | undefined, fallback: string): string {
  if (v == null || v === '') return fallback;
  let ns: number;
  try {
    ns = parseDurationNs(v);
  } catch {
    // Malformed text is decode's business; keep it visible rather than silently replacing it.
    return v;
  }
  return ns === 0 ? fallback : v;
}
