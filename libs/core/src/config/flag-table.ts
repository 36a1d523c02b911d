import { describeFeatureGates } from './feature-gates.js';

/**
 * Every command-line flag kube-proxy-ts accepts: upstream kube-proxy's (cmd/kube-proxy/app/options.go,
 * v1.31–v1.37, plus component-base logging and the legacy klog flags the v1.31 reference still lists),
 * then our own. --healthz-port and --metrics-port were removed upstream in v1.32 (PR #126889): like
 * upstream's pflag set, the parser refuses them as unknown flags. The table is data: parseFlags reads types from it, applyFlags reads `configField` and
 * `ignoredWithConfig`, formatHelp prints it.
 */

export type FlagType = 'bool' | 'string' | 'int' | 'float' | 'duration' | 'stringList' | 'mapStringBool';
export type FlagValue = boolean | string | number | readonly string[] | Readonly<Record<string, boolean>>;

export type FlagGroup = 'proxy' | 'logging' | 'klog' | 'kube-proxy-ts';

export interface FlagSpec {
  /** Long name, without dashes. Underscores given on the command line are read as dashes, as upstream. */
  readonly name: string;
  readonly shorthand?: string;
  readonly type: FlagType;
  /** Shown in --help; durations in Go form ("30s"). Undefined when the default is "nothing". */
  readonly default?: FlagValue;
  readonly help: string;
  /** Dotted KubeProxyConfiguration path the flag sets; absent for command options (--config, --cleanup…). */
  readonly configField?: string;
  /**
   * True when a --config file makes this flag ineffective. Upstream replaces the whole flag-built
   * configuration with the file's, keeping only the logging flags and --hostname-override.
   */
  readonly ignoredWithConfig: boolean;
  /** Extra parse-time check upstream performs through its flag value types. */
  readonly format?: 'ip' | 'ipOrIpPort';
  /** Deprecation notice; deprecated flags still work but are hidden from --help. */
  readonly deprecated?: string;
  /** Accepted for compatibility but has no effect in kube-proxy-ts. */
  readonly noEffect?: boolean;
  /** Lists: each occurrence adds to the list. */
  readonly repeatable?: boolean;
  readonly group: FlagGroup;
}

const IGNORED = ' This parameter is ignored if a config file is specified by --config.';

function proxyFlag(spec: Omit<FlagSpec, 'group' | 'ignoredWithConfig'> & { ignoredWithConfig?: boolean }): FlagSpec {
  const ignoredWithConfig = spec.ignoredWithConfig ?? spec.configField !== undefined;
  if (!ignoredWithConfig || !spec.configField) return { ...spec, ignoredWithConfig, group: 'proxy' };
  // The note belongs to the first paragraph (feature-gates lists the gates after it).
  const [first, ...rest] = spec.help.split('\n');
  return { ...spec, ignoredWithConfig, help: [first + IGNORED, ...rest].join('\n'), group: 'proxy' };
}

const KLOG_GONE = 'klog flags were removed from Kubernetes components in v1.26 (KEP-2845); accepted and ignored';

function klogFlag(name: string, type: FlagType, help: string, def?: FlagValue): FlagSpec {
  return { name, type, help, ...(def === undefined ? {} : { default: def }), ignoredWithConfig: false, noEffect: true, deprecated: KLOG_GONE, group: 'klog' };
}

export const KUBE_PROXY_FLAGS: readonly FlagSpec[] = [
  // --- command options (not part of the configuration) ---
  proxyFlag({ name: 'config', type: 'string', help: 'Path of a KubeProxyConfiguration file (YAML or JSON). When given, most other flags are ignored.' }),
  proxyFlag({ name: 'write-config-to', type: 'string', help: 'Write the effective configuration (defaults plus flags) to this file as YAML, then exit.' }),
  proxyFlag({ name: 'cleanup', type: 'bool', default: false, help: 'Remove the rules every proxy mode may have programmed on this node, then exit.' }),
  proxyFlag({ name: 'init-only', type: 'bool', default: false, help: 'Do the steps that need full root privileges (sysctls, conntrack limits), then exit; later runs then need only CAP_NET_ADMIN.' }),
  proxyFlag({ name: 'master', type: 'string', help: 'API server URL; overrides the server in the kubeconfig.' }),
  proxyFlag({ name: 'help', shorthand: 'h', type: 'bool', default: false, help: 'Print this help and exit.' }),
  proxyFlag({ name: 'version', type: 'bool', default: false, help: 'Print the version and exit.' }),

  // --- configuration flags ---
  proxyFlag({ name: 'bind-address', type: 'string', default: '0.0.0.0', format: 'ip', configField: 'bindAddress', help: "The node's primary IP as kube-proxy should assume it. Despite the name, nothing binds to it." }),
  proxyFlag({ name: 'bind-address-hard-fail', type: 'bool', default: false, configField: 'bindAddressHardFail', help: 'Exit when the healthz or metrics port cannot be bound, instead of carrying on without it.' }),
  proxyFlag({ name: 'cluster-cidr', type: 'string', configField: 'clusterCIDR', help: 'Pod CIDR of the cluster (for dual-stack, a comma-separated IPv4,IPv6 pair). With --detect-local-mode=ClusterCIDR, traffic from it counts as local.' }),
  proxyFlag({ name: 'config-sync-period', type: 'duration', default: '15m0s', configField: 'configSyncPeriod', help: 'How often the informers re-list from the API server. Must be greater than 0.' }),
  proxyFlag({ name: 'conntrack-max-per-core', type: 'int', default: 32768, configField: 'conntrack.maxPerCore', help: 'Tracked connections to allow per CPU core (0 leaves the kernel limit alone and ignores --conntrack-min).' }),
  proxyFlag({ name: 'conntrack-min', type: 'int', default: 131072, configField: 'conntrack.min', help: 'Lower bound for the conntrack table size, whatever --conntrack-max-per-core works out to.' }),
  proxyFlag({ name: 'conntrack-tcp-be-liberal', type: 'bool', default: false, configField: 'conntrack.tcpBeLiberal', help: 'Set nf_conntrack_tcp_be_liberal=1 so out-of-window TCP packets are not marked INVALID.' }),
  proxyFlag({ name: 'conntrack-tcp-timeout-close-wait', type: 'duration', default: '1h0m0s', configField: 'conntrack.tcpCloseWaitTimeout', help: 'Conntrack timeout for TCP connections in CLOSE_WAIT.' }),
  proxyFlag({ name: 'conntrack-tcp-timeout-established', type: 'duration', default: '24h0m0s', configField: 'conntrack.tcpEstablishedTimeout', help: 'Conntrack timeout for idle established TCP connections (0 leaves it alone).' }),
  proxyFlag({ name: 'conntrack-udp-timeout', type: 'duration', default: '0s', configField: 'conntrack.udpTimeout', help: 'Conntrack timeout for UDP flows that saw no reply (0 leaves it alone).' }),
  proxyFlag({ name: 'conntrack-udp-timeout-stream', type: 'duration', default: '0s', configField: 'conntrack.udpStreamTimeout', help: 'Conntrack timeout for UDP flows that saw traffic both ways (0 leaves it alone).' }),
  proxyFlag({ name: 'detect-local-mode', type: 'string', configField: 'detectLocalMode', help: 'How to tell pod-originated traffic apart: ClusterCIDR (the default), NodeCIDR, BridgeInterface or InterfaceNamePrefix.' }),
  proxyFlag({ name: 'feature-gates', type: 'mapStringBool', configField: 'featureGates', repeatable: true, help: `Comma-separated name=true|false pairs switching features.\nKnown gates:\n${describeFeatureGates().join('\n')}` }),
  proxyFlag({ name: 'healthz-bind-address', type: 'string', default: '0.0.0.0:10256', format: 'ipOrIpPort', configField: 'healthzBindAddress', help: 'IP[:port] for the /healthz and /livez server; empty disables it.' }),
  proxyFlag({ name: 'hostname-override', type: 'string', configField: 'hostnameOverride', ignoredWithConfig: false, help: "Node name to use instead of the host's name (lower-cased). Takes precedence over the config file." }),
  proxyFlag({ name: 'iptables-localhost-nodeports', type: 'bool', default: true, configField: 'iptables.localhostNodePorts', help: 'Keep the legacy behaviour of answering NodePorts on 127.0.0.1 (iptables mode, IPv4 only).' }),
  proxyFlag({ name: 'iptables-masquerade-bit', type: 'int', default: 14, configField: 'iptables.masqueradeBit', help: 'Bit of the packet mark used to flag packets for SNAT, in iptables and ipvs modes. Must be within [0, 31].' }),
  proxyFlag({ name: 'iptables-min-sync-period', type: 'duration', default: '1s', configField: 'iptables.minSyncPeriod', help: 'Shortest time between two rule syncs (also used by nftables mode); 0 syncs on every change.' }),
  proxyFlag({ name: 'iptables-sync-period', type: 'duration', default: '30s', configField: 'iptables.syncPeriod', help: 'Longest time between two full resyncs (also used by nftables mode). Must be greater than 0.' }),
  proxyFlag({ name: 'ipvs-exclude-cidrs', type: 'stringList', configField: 'ipvs.excludeCIDRs', repeatable: true, help: 'Comma-separated CIDRs whose IPVS virtual servers cleanup must leave alone.' }),
  proxyFlag({ name: 'ipvs-min-sync-period', type: 'duration', default: '1s', configField: 'ipvs.minSyncPeriod', help: 'Shortest time between two IPVS rule syncs; 0 syncs on every change.' }),
  proxyFlag({ name: 'ipvs-scheduler', type: 'string', configField: 'ipvs.scheduler', help: 'IPVS scheduler (rr, wrr, lc, wlc, lblc, lblcr, sh, dh, sed, nq, …); empty means rr.' }),
  proxyFlag({ name: 'ipvs-strict-arp', type: 'bool', default: false, configField: 'ipvs.strictARP', help: 'Set arp_ignore=1 and arp_announce=2 so the node does not answer ARP for service IPs.' }),
  proxyFlag({ name: 'ipvs-sync-period', type: 'duration', default: '30s', configField: 'ipvs.syncPeriod', help: 'Longest time between two full IPVS resyncs. Must be greater than 0.' }),
  proxyFlag({ name: 'ipvs-tcp-timeout', type: 'duration', default: '0s', configField: 'ipvs.tcpTimeout', help: 'IPVS timeout for idle TCP connections (0 leaves it alone).' }),
  proxyFlag({ name: 'ipvs-tcpfin-timeout', type: 'duration', default: '0s', configField: 'ipvs.tcpFinTimeout', help: 'IPVS timeout for TCP connections after a FIN (0 leaves it alone).' }),
  proxyFlag({ name: 'ipvs-udp-timeout', type: 'duration', default: '0s', configField: 'ipvs.udpTimeout', help: 'IPVS timeout for UDP flows (0 leaves it alone).' }),
  proxyFlag({ name: 'kube-api-burst', type: 'int', default: 10, configField: 'clientConnection.burst', help: 'Burst of requests allowed above --kube-api-qps.' }),
  proxyFlag({ name: 'kube-api-content-type', type: 'string', default: 'application/vnd.kubernetes.protobuf', configField: 'clientConnection.contentType', help: 'Content type of requests to the API server.' }),
  proxyFlag({ name: 'kube-api-qps', type: 'float', default: 5, configField: 'clientConnection.qps', help: 'Sustained requests per second to the API server.' }),
  proxyFlag({ name: 'kubeconfig', type: 'string', configField: 'clientConnection.kubeconfig', help: 'Path of a kubeconfig file; with neither it nor --master, the in-cluster service account is used.' }),
  proxyFlag({ name: 'masquerade-all', type: 'bool', default: false, configField: 'iptables.masqueradeAll', help: 'SNAT all traffic sent to service cluster IPs (some CNI plugins need it).' }),
  proxyFlag({ name: 'metrics-bind-address', type: 'string', default: '127.0.0.1:10249', format: 'ipOrIpPort', configField: 'metricsBindAddress', help: 'IP[:port] for the metrics server ("0.0.0.0:10249" / "[::]:10249" to listen everywhere).' }),
  proxyFlag({ name: 'nodeport-addresses', type: 'stringList', configField: 'nodePortAddresses', repeatable: true, help: "Which node IPs accept NodePort traffic: comma-separated CIDRs, or 'primary' for the node's primary IPs. Unset: all local IPs (iptables/ipvs) or primary (nftables)." }),
  proxyFlag({ name: 'oom-score-adj', type: 'int', default: -999, configField: 'oomScoreAdj', help: 'oom_score_adj for the kube-proxy process, within [-1000, 1000].' }),
  proxyFlag({ name: 'pod-bridge-interface', type: 'string', configField: 'detectLocal.bridgeInterface', help: 'With --detect-local-mode=BridgeInterface: traffic arriving from this bridge counts as local.' }),
  proxyFlag({ name: 'pod-interface-name-prefix', type: 'string', configField: 'detectLocal.interfaceNamePrefix', help: 'With --detect-local-mode=InterfaceNamePrefix: traffic from interfaces with this prefix counts as local.' }),
  proxyFlag({ name: 'profiling', type: 'bool', default: false, configField: 'enableProfiling', help: 'Serve profiling data under /debug/pprof on the metrics server.' }),
  proxyFlag({ name: 'proxy-mode', type: 'string', configField: 'mode', help: 'Proxy mode: iptables, ipvs, nftables, or the name of a backend plugin. Empty picks the best one this node supports.' }),
  proxyFlag({ name: 'proxy-port-range', type: 'string', configField: 'portRange', help: 'Userspace mode: host ports its proxy sockets may use (beginPort-endPort, single port or beginPort+offset, inclusive). Unset, 0 or 0-0: the kernel picks free ports.' }),
  proxyFlag({ name: 'udp-timeout', type: 'duration', default: '250ms', configField: 'udpIdleTimeout', help: "Userspace mode: how long an idle UDP client association is kept open (e.g. '250ms', '2s'); must be greater than 0." }),
  proxyFlag({ name: 'show-hidden-metrics-for-version', type: 'string', configField: 'showHiddenMetricsForVersion', help: 'Previous minor version (e.g. "1.36") whose hidden metrics should still be shown.' }),

  // --- component-base logging flags: these win over the config file ---
  { name: 'v', shorthand: 'v', type: 'int', default: 0, configField: 'logging.verbosity', ignoredWithConfig: false, group: 'logging', help: 'Log verbosity: 0 info, 2 verbose, 4 and above debug.' },
  { name: 'vmodule', type: 'string', ignoredWithConfig: false, noEffect: true, group: 'logging', help: 'Per-file verbosity (pattern=N,...). Accepted for compatibility; it names upstream Go files and has no effect here.' },
  { name: 'logging-format', type: 'string', default: 'text', configField: 'logging.format', ignoredWithConfig: false, group: 'logging', help: 'Log format: "text" (klog-like) or "json".' },
  { name: 'log-flush-frequency', type: 'duration', default: '5s', configField: 'logging.flushFrequency', ignoredWithConfig: false, group: 'logging', help: 'Longest time buffered log lines may wait before being flushed.' },
  { name: 'log-text-split-stream', type: 'bool', default: false, configField: 'logging.options.text.splitStream', ignoredWithConfig: false, group: 'logging', help: '[Alpha] Text format: send info lines to stdout and errors to stderr.' },
  { name: 'log-text-info-buffer-size', type: 'string', default: '0', configField: 'logging.options.text.infoBufferSize', ignoredWithConfig: false, group: 'logging', help: '[Alpha] Text format with split streams: buffer size for info lines (a quantity, e.g. 64Ki).' },
  { name: 'log-json-split-stream', type: 'bool', default: false, configField: 'logging.options.json.splitStream', ignoredWithConfig: false, group: 'logging', help: '[Beta] JSON format: send info lines to stdout and errors to stderr.' },
  { name: 'log-json-info-buffer-size', type: 'string', default: '0', configField: 'logging.options.json.infoBufferSize', ignoredWithConfig: false, group: 'logging', help: '[Beta] JSON format with split streams: buffer size for info lines (a quantity, e.g. 64Ki).' },

  // --- legacy klog flags, still listed by the v1.31 reference: accepted, no effect ---
  klogFlag('add-dir-header', 'bool', 'Prefix log lines with the source directory.', false),
  klogFlag('alsologtostderr', 'bool', 'Log to stderr as well as to files.', false),
  klogFlag('log-backtrace-at', 'string', 'Emit a stack trace when logging at file:line.'),
  klogFlag('log-dir', 'string', 'Write log files into this directory.'),
  klogFlag('log-file', 'string', 'Write logs to this file.'),
  klogFlag('log-file-max-size', 'int', 'Maximum log file size in megabytes.', 1800),
  klogFlag('logtostderr', 'bool', 'Log to stderr instead of files.', true),
  klogFlag('one-output', 'bool', 'Write each line only at its own severity.', false),
  klogFlag('skip-headers', 'bool', 'Omit the header of log lines.', false),
  klogFlag('skip-log-headers', 'bool', 'Omit headers when opening log files.', false),
  klogFlag('stderrthreshold', 'string', 'Lines at or above this severity go to stderr.', '2'),

  // --- kube-proxy-ts additions ---
  { name: 'manifests', type: 'string', ignoredWithConfig: false, group: 'kube-proxy-ts', help: 'Read Services, EndpointSlices and Nodes from this YAML file or directory instead of an API server (offline runs and demos).' },
  { name: 'dry-run', type: 'bool', default: false, ignoredWithConfig: false, group: 'kube-proxy-ts', help: 'Never change the host: print the rules each sync would program to stdout instead.' },
  { name: 'once', type: 'bool', default: false, ignoredWithConfig: false, group: 'kube-proxy-ts', help: 'Exit after the first successful sync.' },
  { name: 'backend-plugin', type: 'stringList', configField: 'backendPlugins', repeatable: true, ignoredWithConfig: false, group: 'kube-proxy-ts', help: 'npm module of a third-party backend plugin to load (repeatable; added to the config file\'s backendPlugins).' },
  { name: 'service-proxy-name', type: 'string', ignoredWithConfig: false, group: 'kube-proxy-ts', help: 'Handle only Services labelled service.kubernetes.io/service-proxy-name=<this> (default: only Services without that label, as upstream).' },
];

const BY_NAME = new Map(KUBE_PROXY_FLAGS.map((f) => [f.name, f]));
const BY_SHORTHAND = new Map(KUBE_PROXY_FLAGS.flatMap((f) => (f.shorthand ? [[f.shorthand, f] as const] : [])));

export function findFlag(name: string): FlagSpec | undefined {
  return BY_NAME.get(name);
}

export function findShorthand(letter: string): FlagSpec | undefined {
  return BY_SHORTHAND.get(letter);
}
