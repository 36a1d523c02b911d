/**
 * The shape of a KubeProxyConfiguration file (kubeproxy.config.k8s.io/v1alpha1, as of kube-proxy
 * v0.34), for strict decoding: every field upstream's Go types accept, with the JSON type it must have.
 * Anything not listed here is an unknown field.
 */
export type FieldSchema =
  | { readonly kind: 'string' }
  | { readonly kind: 'bool' }
  /** A whole number in [min, max]. */
  | { readonly kind: 'int'; readonly min: number; readonly max: number }
  | { readonly kind: 'float' }
  /** A Go duration string ("30s"); stored in Go's canonical form. */
  | { readonly kind: 'duration' }
  /** logging.flushFrequency: a duration string, or an integer number of nanoseconds. */
  | { readonly kind: 'durationOrNanos' }
  /** A Kubernetes resource quantity ("0", "64Ki"), as a string or a number. */
  | { readonly kind: 'quantity' }
  /** A list of strings; null is kept as null (upstream distinguishes it from []). */
  | { readonly kind: 'stringList' }
  | { readonly kind: 'mapStringBool' }
  /** Accepted and type-checked but not kept (no place for it in our config type). */
  | { readonly kind: 'discarded'; readonly inner: FieldSchema }
  | { readonly kind: 'list'; readonly item: FieldSchema }
  | { readonly kind: 'object'; readonly fields: Readonly<Record<string, FieldSchema>> };

const string = { kind: 'string' } as const;
const bool = { kind: 'bool' } as const;
const int32 = { kind: 'int', min: -2147483648, max: 2147483647 } as const;
const uint32 = { kind: 'int', min: 0, max: 4294967295 } as const;
const duration = { kind: 'duration' } as const;
const object = (fields: Record<string, FieldSchema>): FieldSchema => ({ kind: 'object', fields });

const formatOptions = object({ infoBufferSize: { kind: 'quantity' }, splitStream: bool });

export const KUBE_PROXY_CONFIGURATION_SCHEMA = object({
  apiVersion: string,
  kind: string,
  featureGates: { kind: 'mapStringBool' },
  clientConnection: object({
    kubeconfig: string,
    acceptContentTypes: string,
    contentType: string,
    qps: { kind: 'float' },
    burst: int32,
  }),
  logging: object({
    format: string,
    flushFrequency: { kind: 'durationOrNanos' },
    verbosity: uint32,
    // Per-file verbosity names Go source files of upstream; it has no meaning for us, so it is accepted
    // for compatibility with upstream files and then dropped.
    vmodule: { kind: 'discarded', inner: { kind: 'list', item: object({ filePattern: string, verbosity: uint32 }) } },
    options: object({ json: formatOptions, text: formatOptions }),
  }),
  hostnameOverride: string,
  bindAddress: string,
  healthzBindAddress: string,
  metricsBindAddress: string,
  bindAddressHardFail: bool,
  enableProfiling: bool,
  showHiddenMetricsForVersion: string,
  mode: string,
  iptables: object({
    masqueradeBit: int32,
    masqueradeAll: bool,
    localhostNodePorts: bool,
    syncPeriod: duration,
    minSyncPeriod: duration,
  }),
  ipvs: object({
    syncPeriod: duration,
    minSyncPeriod: duration,
    scheduler: string,
    excludeCIDRs: { kind: 'stringList' },
    strictARP: bool,
    tcpTimeout: duration,
    tcpFinTimeout: duration,
    udpTimeout: duration,
  }),
  nftables: object({
    masqueradeBit: int32,
    masqueradeAll: bool,
    syncPeriod: duration,
    minSyncPeriod: duration,
  }),
  winkernel: object({
    networkName: string,
    sourceVip: string,
    enableDSR: bool,
    rootHnsEndpointName: string,
    forwardHealthCheckVip: bool,
  }),
  detectLocalMode: string,
  detectLocal: object({ bridgeInterface: string, interfaceNamePrefix: string }),
  clusterCIDR: string,
  nodePortAddresses: { kind: 'stringList' },
  oomScoreAdj: int32,
  conntrack: object({
    maxPerCore: int32,
    min: int32,
    tcpEstablishedTimeout: duration,
    tcpCloseWaitTimeout: duration,
    tcpBeLiberal: bool,
    udpTimeout: duration,
    udpStreamTimeout: duration,
  }),
  configSyncPeriod: duration,
  portRange: string,
  udpIdleTimeout: duration,
  windowsRunAsService: bool,
  // kube-proxy-ts extension: npm specifiers of backend plugins to load.
  backendPlugins: { kind: 'list', item: string },
});
