/**
 * KubeProxyConfiguration, kubeproxy.config.k8s.io/v1alpha1, in its defaulted form.
 * Durations are kept as upstream's metav1.Duration strings ("30s", "1h0m0s") in the file and parsed to
 * milliseconds on load (`*Ms` fields are not part of the file format; see config/load.ts).
 * Field names and defaults follow upstream (k8s.io/kube-proxy/config/v1alpha1 and its defaults.go).
 */
export interface ClientConnectionConfiguration {
  kubeconfig: string;
  acceptContentTypes: string;
  contentType: string;
  qps: number;
  burst: number;
}

export interface LoggingConfiguration {
  format: 'text' | 'json';
  flushFrequency: string;
  verbosity: number;
  options?: Record<string, unknown>;
}

export interface IPTablesConfiguration {
  masqueradeBit: number;
  masqueradeAll: boolean;
  localhostNodePorts: boolean;
  syncPeriod: string;
  minSyncPeriod: string;
}

export interface IPVSConfiguration {
  syncPeriod: string;
  minSyncPeriod: string;
  scheduler: string;
  excludeCIDRs: string[] | null;
  strictARP: boolean;
  tcpTimeout: string;
  tcpFinTimeout: string;
  udpTimeout: string;
}

export interface NFTablesConfiguration {
  masqueradeBit: number;
  masqueradeAll: boolean;
  syncPeriod: string;
  minSyncPeriod: string;
}

export interface KubeProxyConntrackConfiguration {
  maxPerCore: number;
  min: number;
  tcpEstablishedTimeout: string;
  tcpCloseWaitTimeout: string;
  tcpBeLiberal: boolean;
  udpTimeout: string;
  udpStreamTimeout: string;
}

export interface DetectLocalConfiguration {
  bridgeInterface: string;
  interfaceNamePrefix: string;
}

export type LocalMode = 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix';

export interface KubeProxyConfiguration {
  apiVersion: 'kubeproxy.config.k8s.io/v1alpha1';
  kind: 'KubeProxyConfiguration';
  featureGates: Record<string, boolean>;
  clientConnection: ClientConnectionConfiguration;
  logging: LoggingConfiguration;
  hostnameOverride: string;
  bindAddress: string;
  healthzBindAddress: string;
  metricsBindAddress: string;
  bindAddressHardFail: boolean;
  enableProfiling: boolean;
  showHiddenMetricsForVersion: string;
  /** "" means auto (capability detection). */
  mode: string;
  iptables: IPTablesConfiguration;
  ipvs: IPVSConfiguration;
  nftables: NFTablesConfiguration;
  winkernel: Record<string, unknown>;
  detectLocalMode: LocalMode | '';
  detectLocal: DetectLocalConfiguration;
  clusterCIDR: string;
  nodePortAddresses: string[] | null;
  oomScoreAdj: number;
  conntrack: KubeProxyConntrackConfiguration;
  configSyncPeriod: string;
  /** Ports the userspace mode's proxy sockets may use ("", "N", "N-M", "N+K"); "" lets the kernel choose. */
  portRange: string;
  /**
   * Userspace mode: how long an idle UDP client association is kept (v1alpha1 `udpIdleTimeout`, which
   * upstream removed with its userspace mode in v1.26; default 250ms).
   */
  udpIdleTimeout: string;
  windowsRunAsService: boolean;
  /** kube-proxy-ts extension: npm module specifiers of third-party backend plugins to load. */
  backendPlugins: string[];
}
