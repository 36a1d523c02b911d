import type { KubeProxyConfiguration } from './types.js';
import { defaultConfiguration } from './defaults.js';
import { formatFieldErrors } from './errors.js';
import { validateConfiguration } from './validate.js';
import { describeFeatureGates, EMULATED_KUBERNETES_VERSION } from './feature-gates.js';

const NPA_INVALID = "must be a valid CIDR or one of the keywords 'primary', 'localhost', 'all'";

function errorsFor(change: (cfg: KubeProxyConfiguration) => void): string[] {
  const cfg = defaultConfiguration();
  change(cfg);
  return validateConfiguration(cfg).map((e) => `${e.field}: ${e.message}`);
}

describe('validateConfiguration', () => {
  it('accepts the defaults', () => {
    expect(validateConfiguration(defaultConfiguration())).toEqual([]);
  });

  it('accepts a realistic dual-stack nftables configuration', () => {
    expect(
      errorsFor((c) => {
        c.mode = 'nftables';
        c.clusterCIDR = '10.244.0.0/16,fd00:10:244::/56';
        c.nodePortAddresses = ['primary'];
        c.bindAddress = '::';
        c.healthzBindAddress = '[::]:10256';
        c.featureGates = { NFTablesNetlink: false, NFTablesProxyMode: true };
        c.detectLocalMode = 'ClusterCIDR';
      }),
    ).toEqual([]);
  });

  it.each<[string, (c: KubeProxyConfiguration) => void, string]>([
    ['masqueradeBit > 31', (c) => (c.iptables.masqueradeBit = 32), 'iptables.masqueradeBit: must be within the range [0, 31]'],
    ['masqueradeBit < 0', (c) => (c.iptables.masqueradeBit = -1), 'iptables.masqueradeBit: must be within the range [0, 31]'],
    ['syncPeriod 0', (c) => ((c.iptables.syncPeriod = '0s'), (c.iptables.minSyncPeriod = '0s')), 'iptables.syncPeriod: must be greater than 0'],
    ['negative minSyncPeriod', (c) => (c.iptables.minSyncPeriod = '-1s'), 'iptables.minSyncPeriod: must be greater than or equal to 0'],
    ['minSync > sync', (c) => (c.iptables.minSyncPeriod = '1m0s'), 'iptables.syncPeriod: must be greater than or equal to iptables.minSyncPeriod'],
    ['oomScoreAdj', (c) => (c.oomScoreAdj = 1001), 'oomScoreAdj: must be within the range [-1000, 1000]'],
    ['conntrack max', (c) => (c.conntrack.maxPerCore = -1), 'conntrack.maxPerCore: must be greater than or equal to 0'],
    ['conntrack min', (c) => (c.conntrack.min = -1), 'conntrack.min: must be greater than or equal to 0'],
    ['conntrack timeout', (c) => (c.conntrack.tcpEstablishedTimeout = '-1s'), 'conntrack.tcpEstablishedTimeout: must be greater than or equal to 0'],
    ['conntrack udp', (c) => (c.conntrack.udpStreamTimeout = '-5s'), 'conntrack.udpStreamTimeout: must be greater than or equal to 0'],
    ['burst', (c) => (c.clientConnection.burst = -1), 'clientConnection.burst: must be greater than or equal to 0'],
    ['configSyncPeriod', (c) => (c.configSyncPeriod = '-1s'), 'configSyncPeriod: must be greater than 0'],
    ['bindAddress', (c) => (c.bindAddress = 'node-1'), 'bindAddress: not a valid textual representation of an IP address'],
    ['healthz no port', (c) => (c.healthzBindAddress = '1.2.3.4'), 'healthzBindAddress: must be IP:port'],
    ['healthz bad ip', (c) => (c.healthzBindAddress = 'localhost:80'), 'healthzBindAddress: must be a valid IP'],
    ['metrics bad port', (c) => (c.metricsBindAddress = '127.0.0.1:70000'), 'metricsBindAddress: must be a valid port'],
    ['metrics empty', (c) => (c.metricsBindAddress = ''), 'metricsBindAddress: must be IP:port'],
    ['clusterCIDR', (c) => (c.clusterCIDR = '10.0.0.0/33'), 'clusterCIDR: "10.0.0.0/33" must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)'],
    ['clusterCIDR two v4', (c) => (c.clusterCIDR = '10.0.0.0/8,11.0.0.0/8'), 'clusterCIDR: must be either a single CIDR or a dual-stack pair of CIDRs (e.g. 10.100.0.0/16,fde4:8dba:82e1::/48)'],
    ['clusterCIDR three', (c) => (c.clusterCIDR = '10.0.0.0/8,fd00::/8,11.0.0.0/8'), 'clusterCIDR: must be either a single CIDR or a dual-stack pair of CIDRs (e.g. 10.100.0.0/16,fde4:8dba:82e1::/48)'],
    ['nodePortAddresses', (c) => (c.nodePortAddresses = ['10.0.0.0/8', '10.20.30.40']), `nodePortAddresses[1]: ${NPA_INVALID}`],
    ['detectLocalMode', (c) => (c.detectLocalMode = 'PodCIDR' as never), 'detectLocalMode: Unsupported value: "PodCIDR": supported values: "ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix", ""'],
    ['bridge', (c) => (c.detectLocalMode = 'BridgeInterface'), 'detectLocal.bridgeInterface: must not be empty when detectLocalMode is BridgeInterface'],
    ['prefix', (c) => (c.detectLocalMode = 'InterfaceNamePrefix'), 'detectLocal.interfaceNamePrefix: must not be empty when detectLocalMode is InterfaceNamePrefix'],
    ['unknown gate', (c) => (c.featureGates = { NoSuchGate: true }), 'featureGates: unrecognized feature gate: NoSuchGate'],
    ['gate removed upstream', (c) => (c.featureGates = { LoadBalancerIPMode: true }), 'featureGates: unrecognized feature gate: LoadBalancerIPMode'],
    ['GA since v1.35', (c) => (c.featureGates = { PreferSameTrafficDistribution: false }), 'featureGates: cannot set feature gate PreferSameTrafficDistribution to false, feature is locked to true'],
    ['locked gate', (c) => (c.featureGates = { NFTablesProxyMode: false }), 'featureGates: cannot set feature gate NFTablesProxyMode to false, feature is locked to true'],
    ['logging format', (c) => (c.logging.format = 'xml' as never), 'logging.format: Unsupported value: "xml": supported values: "json", "text"'],
    ['portRange', (c) => (c.portRange = '2000-1000'), 'portRange: must be a valid port range (e.g. 300-2000)'],
    ['udpIdleTimeout', (c) => (c.udpIdleTimeout = '0s'), 'udpIdleTimeout: must be greater than zero'],
    ['hidden metrics', (c) => (c.showHiddenMetricsForVersion = '1.20'), "showHiddenMetricsForVersion: must be omitted or have the value '1.36'. Only the previous minor version is allowed"],
    ['plugin', (c) => (c.backendPlugins = ['']), 'backendPlugins[0]: must not be empty'],
    [
      'ipvs with KubeProxyIPVS off',
      (c) => {
        c.mode = 'ipvs';
        c.featureGates = { KubeProxyIPVS: false };
      },
      'mode: Invalid value: "ipvs": must be iptables,nftables,userspace or blank (blank means the best-available proxy [currently iptables])',
    ],
  ])('reports %s', (_name, change, expected) => {
    expect(errorsFor(change)).toEqual([expected]);
  });

  describe('nodePortAddresses (upstream v1.37 keywords)', () => {
    it.each<[string, string[]]>([
      ['primary', ['primary']],
      ['localhost', ['localhost']],
      ['all', ['all']],
      ['primary and localhost', ['primary', 'localhost']],
      ['every keyword', ['primary', 'localhost', 'all']],
      ['a keyword with CIDRs of both families', ['10.0.0.0/8', 'primary', 'fd00::/64', '127.0.0.1/32']],
      ['all with a CIDR', ['0.0.0.0/0', 'all']],
      ['a CIDR twice (accepted before v1.37, still accepted)', ['10.0.0.0/8', '10.0.0.0/8']],
    ])('accepts %s', (_name, addresses) => {
      expect(errorsFor((c) => (c.nodePortAddresses = addresses))).toEqual([]);
    });

    it.each<[string, string[], string[]]>([
      ['a duplicate keyword', ['localhost', 'primary', 'localhost'], ['nodePortAddresses[2]: Duplicate value: "localhost"']],
      ['a keyword three times', ['all', 'all', 'all'], ['nodePortAddresses[1]: Duplicate value: "all"', 'nodePortAddresses[2]: Duplicate value: "all"']],
      ['a capitalised keyword', ['Primary'], [`nodePortAddresses[0]: ${NPA_INVALID} (keywords are lowercase: "primary")`]],
      ['an upper-case keyword after a CIDR', ['10.0.0.0/8', 'LOCALHOST'], [`nodePortAddresses[1]: ${NPA_INVALID} (keywords are lowercase: "localhost")`]],
      ['an unknown word', ['bogus'], [`nodePortAddresses[0]: ${NPA_INVALID}`]],
      ['a bare IP', ['primary', '10.20.30.40'], [`nodePortAddresses[1]: ${NPA_INVALID}`]],
      ['an empty entry', ['localhost', ''], [`nodePortAddresses[1]: ${NPA_INVALID}`]],
    ])('rejects %s, naming the entry', (_name, addresses, expected) => {
      expect(errorsFor((c) => (c.nodePortAddresses = addresses))).toEqual(expected);
    });

    it('carries the offending value', () => {
      const cfg = defaultConfiguration();
      cfg.nodePortAddresses = ['all', 'Localhost'];
      expect(validateConfiguration(cfg)).toEqual([{ field: 'nodePortAddresses[1]', message: `${NPA_INVALID} (keywords are lowercase: "localhost")`, value: 'Localhost' }]);
    });
  });

  it('knows the v1.37 gates: KubeProxyIPVS and AllowServiceExternalIPs deprecated and on, NFTablesNetlink beta', () => {
    const settings: Record<string, boolean>[] = [{ KubeProxyIPVS: true }, { AllowServiceExternalIPs: false }, { NFTablesNetlink: false }, { KubeProxyNFTablesLocalhostNodePorts: true }];
    for (const gates of settings) {
      expect(errorsFor((c) => (c.featureGates = gates))).toEqual([]);
    }
    // Other modes, blank and plugin modes are not affected by the gate.
    for (const mode of ['', 'iptables', 'nftables', 'userspace', 'my-plugin']) {
      expect(errorsFor((c) => ((c.mode = mode), (c.featureGates = { KubeProxyIPVS: false })))).toEqual([]);
    }
    expect(describeFeatureGates()).toEqual(
      expect.arrayContaining([
        'KubeProxyIPVS=true|false (DEPRECATED - default=true)',
        'AllowServiceExternalIPs=true|false (DEPRECATED - default=true)',
        'NFTablesNetlink=true|false (BETA - default=true)',
        'KubeProxyNFTablesLocalhostNodePorts=true|false (ALPHA - default=false)',
      ]),
    );
    expect(EMULATED_KUBERNETES_VERSION).toEqual({ major: 1, minor: 37 });
  });

  it('checks the section of the configured mode', () => {
    expect(
      errorsFor((c) => {
        c.mode = 'ipvs';
        c.iptables.syncPeriod = '-1s'; // not used in ipvs mode
        c.ipvs.syncPeriod = '0s';
        c.ipvs.tcpTimeout = '-1s';
        c.ipvs.excludeCIDRs = ['nope'];
        c.ipvs.scheduler = 'fastest';
      }).sort(),
    ).toEqual(
      [
        'ipvs.syncPeriod: must be greater than 0',
        'ipvs.tcpTimeout: must be greater than or equal to 0',
        'ipvs.excludeCIDRs[0]: must be a valid CIDR',
        'ipvs.scheduler: must be one of rr, wrr, lc, wlc, lblc, lblcr, dh, sh, sed, nq, fo, ovf, mh, twos, blank means the default algorithm method (currently rr)',
      ].sort(),
    );
    expect(errorsFor((c) => ((c.mode = 'nftables'), (c.nftables.masqueradeBit = 40), (c.iptables.syncPeriod = '0s')))).toEqual([
      'nftables.masqueradeBit: must be within the range [0, 31]',
    ]);
  });

  it('accepts any mode name (the backend registry checks those)', () => {
    expect(errorsFor((c) => (c.mode = 'ebpf-acme'))).toEqual([]);
  });

  it('allows an empty healthz address (disabled) and IPv6 host:port', () => {
    expect(errorsFor((c) => ((c.healthzBindAddress = ''), (c.metricsBindAddress = '[::1]:10249')))).toEqual([]);
  });

  it('formats errors one per line', () => {
    const cfg = defaultConfiguration();
    cfg.oomScoreAdj = -2000;
    cfg.iptables.masqueradeBit = 99;
    expect(formatFieldErrors(validateConfiguration(cfg))).toBe(
      'iptables.masqueradeBit: must be within the range [0, 31]\noomScoreAdj: must be within the range [-1000, 1000]',
    );
  });
});
