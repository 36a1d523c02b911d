import { decodeConfiguration } from './decode.js';
import { defaultConfiguration } from './defaults.js';
import { applyFlags, FlagError, formatHelp, KUBE_PROXY_FLAGS, parseFlags } from './flags.js';

function flagError(argv: string[]): FlagError {
  try {
    parseFlags(argv);
  } catch (e) {
    expect(e).toBeInstanceOf(FlagError);
    return e as FlagError;
  }
  throw new Error('expected a FlagError');
}

const FILE = decodeConfiguration(
  'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nhostnameOverride: from-file\nlogging:\n  verbosity: 1\n',
  'file.yaml',
);

describe('KUBE_PROXY_FLAGS', () => {
  it('lists every upstream flag of the reference once', () => {
    const names = KUBE_PROXY_FLAGS.map((f) => f.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of [
      'bind-address', 'bind-address-hard-fail', 'cleanup', 'cluster-cidr', 'config', 'config-sync-period',
      'conntrack-max-per-core', 'conntrack-min', 'conntrack-tcp-be-liberal', 'conntrack-tcp-timeout-close-wait',
      'conntrack-tcp-timeout-established', 'conntrack-udp-timeout', 'conntrack-udp-timeout-stream', 'detect-local-mode',
      'feature-gates', 'healthz-bind-address', 'help', 'hostname-override', 'init-only',
      'iptables-localhost-nodeports', 'iptables-masquerade-bit', 'iptables-min-sync-period', 'iptables-sync-period',
      'ipvs-exclude-cidrs', 'ipvs-min-sync-period', 'ipvs-scheduler', 'ipvs-strict-arp', 'ipvs-sync-period',
      'ipvs-tcp-timeout', 'ipvs-tcpfin-timeout', 'ipvs-udp-timeout', 'kube-api-burst', 'kube-api-content-type',
      'kube-api-qps', 'kubeconfig', 'masquerade-all', 'master', 'metrics-bind-address',
      'nodeport-addresses', 'oom-score-adj', 'pod-bridge-interface', 'pod-interface-name-prefix', 'profiling',
      'proxy-mode', 'proxy-port-range', 'show-hidden-metrics-for-version', 'udp-timeout', 'write-config-to', 'version',
      'v', 'vmodule', 'logging-format', 'log-flush-frequency', 'log-text-split-stream', 'log-text-info-buffer-size',
      'add-dir-header', 'alsologtostderr', 'log-backtrace-at', 'log-dir', 'log-file', 'log-file-max-size',
      'logtostderr', 'one-output', 'skip-headers', 'skip-log-headers', 'stderrthreshold',
      'manifests', 'dry-run', 'once', 'backend-plugin', 'service-proxy-name',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('marks only logging flags and --hostname-override as winning over a config file', () => {
    const honoured = KUBE_PROXY_FLAGS.filter((f) => f.configField && !f.ignoredWithConfig).map((f) => f.name);
    expect(honoured.filter((n) => !n.startsWith('log') && n !== 'v')).toEqual(['hostname-override', 'backend-plugin']);
  });
});

describe('parseFlags', () => {
  it('parses --flag=value, --flag value, bools and shorthands', () => {
    const p = parseFlags([
      '--proxy-mode=ipvs', '--cluster-cidr', '10.0.0.0/8', '--masquerade-all', '--iptables-localhost-nodeports=false',
      '-v', '4', '--kube-api-qps=7.5', '--config-sync-period', '1m', '--dry-run', '--once',
    ]);
    expect(Object.fromEntries(p.values)).toEqual({
      'proxy-mode': 'ipvs',
      'cluster-cidr': '10.0.0.0/8',
      'masquerade-all': true,
      'iptables-localhost-nodeports': false,
      v: 4,
      'kube-api-qps': 7.5,
      'config-sync-period': '1m0s',
      'dry-run': true,
      once: true,
    });
    expect(p.options).toMatchObject({ dryRun: true, once: true, help: false, cleanup: false });
  });

  it.each([['-v=3'], ['-v3'], ['--v=3'], ['--v', '3']])('reads verbosity from %j', (...argv) => {
    expect(parseFlags(argv).values.get('v')).toBe(3);
  });

  it('reads underscores in names as dashes, as upstream normalises them', () => {
    expect(parseFlags(['--log_dir=/tmp', '--kube_api_burst=3']).values.get('kube-api-burst')).toBe(3);
  });

  it('stops at -h / --help', () => {
    expect(parseFlags(['-h', '--bogus']).options.help).toBe(true);
    expect(parseFlags(['--help']).options.help).toBe(true);
  });

  it('collects command options', () => {
    const p = parseFlags([
      '--config', '/etc/kp.yaml', '--write-config-to=/tmp/out.yaml', '--cleanup', '--init-only', '--master', 'https://api:6443',
      '--manifests', './m', '--service-proxy-name', 'mine', '--version',
    ]);
    expect(p.options).toEqual({
      help: false, version: true, cleanup: true, initOnly: true, dryRun: false, once: false,
      configFile: '/etc/kp.yaml', writeConfigTo: '/tmp/out.yaml', master: 'https://api:6443', manifests: './m', serviceProxyName: 'mine',
    });
  });

  it('accumulates repeated lists and maps; other flags: last wins', () => {
    const p = parseFlags([
      '--nodeport-addresses=10.0.0.0/8, 192.168.0.0/16', '--nodeport-addresses', 'fd00::/8',
      '--feature-gates', 'AllBeta=true,LoggingAlphaOptions=false', '--feature-gates=AllBeta=false',
      '--backend-plugin', 'a', '--backend-plugin=b', '--proxy-mode=ipvs', '--proxy-mode=iptables',
    ]);
    expect(p.values.get('nodeport-addresses')).toEqual(['10.0.0.0/8', '192.168.0.0/16', 'fd00::/8']);
    expect(p.values.get('feature-gates')).toEqual({ AllBeta: false, LoggingAlphaOptions: false });
    expect(p.values.get('backend-plugin')).toEqual(['a', 'b']);
    expect(p.values.get('proxy-mode')).toBe('iptables');
  });

  it('warns about deprecated and no-effect flags', () => {
    const p = parseFlags(['--logtostderr=false', '--vmodule=proxier=4']);
    expect(p.warnings).toEqual([
      expect.stringContaining('Flag --logtostderr has been deprecated'),
      'Flag --vmodule has no effect in kube-proxy-ts',
    ]);
  });

  it.each([
    [['--bogus'], 'unknown flag: --bogus', '--bogus'],
    // Removed upstream in v1.32 (PR #126889): pflag then knows them no more than any other name.
    [['--healthz-port=10256'], 'unknown flag: --healthz-port', '--healthz-port'],
    [['--metrics-port', '0'], 'unknown flag: --metrics-port', '--metrics-port'],
    [['-x'], "unknown shorthand flag: 'x' in -x", '-x'],
    [['--proxy-mode'], 'flag needs an argument: --proxy-mode', '--proxy-mode'],
    [['--oom-score-adj=low'], 'invalid argument "low" for "--oom-score-adj" flag: must be an integer', '--oom-score-adj'],
    [['--masquerade-all=maybe'], 'invalid argument "maybe" for "--masquerade-all" flag: must be true or false', '--masquerade-all'],
    [['--iptables-sync-period=30'], 'invalid argument "30" for "--iptables-sync-period" flag: time: missing unit in duration "30"', '--iptables-sync-period'],
    [['--kube-api-qps=x'], 'invalid argument "x" for "--kube-api-qps" flag: must be a number', '--kube-api-qps'],
    [['--feature-gates=Foo'], 'invalid argument "Foo" for "--feature-gates" flag: missing bool value for Foo', '--feature-gates'],
    [['--bind-address=node1'], 'invalid argument "node1" for "--bind-address" flag: "node1" is not a valid IP address', '--bind-address'],
    [['--healthz-bind-address=1.2.3.4:x'], 'invalid argument "1.2.3.4:x" for "--healthz-bind-address" flag: "x" is not a valid number', '--healthz-bind-address'],
    [['-v', '-1'], 'invalid argument "-1" for "--v" flag: must not be negative', '--v'],
  ])('rejects %j', (argv, message, flag) => {
    const e = flagError(argv);
    expect(e.message).toBe(message);
    expect(e.flag).toBe(flag);
  });

  it('rejects positional arguments', () => {
    expect(flagError(['iptables']).message).toBe('kube-proxy does not take any arguments, got "iptables"');
    expect(flagError(['--', 'x']).message).toContain('does not take any arguments');
  });

  it('accepts an IP alone for the IP:port flags and an empty value to disable', () => {
    expect(parseFlags(['--metrics-bind-address=0.0.0.0', '--healthz-bind-address=']).values.get('healthz-bind-address')).toBe('');
  });
});

describe('applyFlags without a config file', () => {
  const apply = (argv: string[]) => {
    const parsed = parseFlags(argv);
    return applyFlags(defaultConfiguration(), parsed, false);
  };

  it('sets the mapped fields', () => {
    const cfg = apply([
      '--proxy-mode=iptables', '--cluster-cidr=10.0.0.0/8', '--oom-score-adj=-500', '--conntrack-max-per-core=0',
      '--nodeport-addresses=primary', '--kubeconfig=/k', '--kube-api-qps=20', '--detect-local-mode=NodeCIDR',
      '--iptables-masquerade-bit=5', '--ipvs-exclude-cidrs=10.1.0.0/16', '--feature-gates=AllBeta=true', '--profiling',
    ]);
    expect(cfg).toMatchObject({
      mode: 'iptables',
      clusterCIDR: '10.0.0.0/8',
      oomScoreAdj: -500,
      conntrack: { maxPerCore: 0 },
      nodePortAddresses: ['primary'],
      clientConnection: { kubeconfig: '/k', qps: 20 },
      detectLocalMode: 'NodeCIDR',
      iptables: { masqueradeBit: 5 },
      ipvs: { excludeCIDRs: ['10.1.0.0/16'] },
      featureGates: { AllBeta: true },
      enableProfiling: true,
    });
  });

  it('does not change the configuration it was given', () => {
    const base = defaultConfiguration();
    applyFlags(base, parseFlags(['--proxy-mode=ipvs', '--nodeport-addresses=primary']), false);
    expect(base).toEqual(defaultConfiguration());
  });

  it('routes sync periods and masquerade-all by mode, as processV1Alpha1Flags does', () => {
    const ipt = apply(['--proxy-mode=iptables', '--iptables-sync-period=10s', '--iptables-min-sync-period=2s', '--ipvs-sync-period=5s', '--masquerade-all']);
    expect(ipt.iptables).toMatchObject({ syncPeriod: '10s', minSyncPeriod: '2s', masqueradeAll: true });
    expect(ipt.ipvs.syncPeriod).toBe('30s');
    expect(ipt.nftables).toMatchObject({ syncPeriod: '30s', masqueradeAll: false });

    const nft = apply(['--proxy-mode=nftables', '--iptables-sync-period=10s', '--masquerade-all']);
    expect(nft.nftables).toMatchObject({ syncPeriod: '10s', masqueradeAll: true });
    expect(nft.iptables).toMatchObject({ syncPeriod: '30s', masqueradeAll: false });

    const ipvs = apply(['--proxy-mode=ipvs', '--iptables-sync-period=10s', '--ipvs-sync-period=20s', '--masquerade-all']);
    expect(ipvs.ipvs).toMatchObject({ syncPeriod: '20s', minSyncPeriod: '1s' });
    expect(ipvs.iptables).toMatchObject({ syncPeriod: '30s', masqueradeAll: true });

    const auto = apply(['--iptables-min-sync-period=3s']);
    expect(auto.iptables.minSyncPeriod).toBe('3s');
    expect(auto.nftables.minSyncPeriod).toBe('3s');
  });

  it('gives a bind address without a port the default port, as upstream', () => {
    expect(apply(['--healthz-bind-address=10.0.0.1']).healthzBindAddress).toBe('10.0.0.1:10256');
    expect(apply(['--metrics-bind-address=::']).metricsBindAddress).toBe('[::]:10249');
    // An address that already has a port keeps it; an empty one disables the server.
    expect(apply(['--healthz-bind-address=10.0.0.1:8080']).healthzBindAddress).toBe('10.0.0.1:8080');
    expect(apply(['--metrics-bind-address=']).metricsBindAddress).toBe('');
    // Not applied when only writing the config out.
    expect(apply(['--healthz-bind-address=10.0.0.1', '--write-config-to=/tmp/x']).healthzBindAddress).toBe('10.0.0.1');
  });

  it('lower-cases and trims --hostname-override and rejects a blank one', () => {
    expect(apply(['--hostname-override', ' Node-A ']).hostnameOverride).toBe('node-a');
    expect(() => apply(['--hostname-override=  '])).toThrow('empty hostname-override is invalid');
  });

  it('ignores no-effect flags', () => {
    expect(apply(['--vmodule=x=2'])).toEqual(apply([]));
  });

  it('sets the userspace port range and UDP idle timeout', () => {
    const cfg = apply(['--proxy-port-range=1000-2000', '--udp-timeout=2s']);
    expect(cfg.portRange).toBe('1000-2000');
    expect(cfg.udpIdleTimeout).toBe('2s');
    expect(apply([]).udpIdleTimeout).toBe('250ms');
  });
});

describe('applyFlags with a config file', () => {
  const apply = (argv: string[]) => applyFlags(FILE, parseFlags(argv), true);

  it('keeps the file over ordinary flags', () => {
    const cfg = apply(['--proxy-mode=iptables', '--iptables-sync-period=1s', '--oom-score-adj=0', '--healthz-bind-address=', '--masquerade-all']);
    expect(cfg).toEqual(FILE);
  });

  it('lets the logging flags and --hostname-override win', () => {
    const cfg = apply(['-v=5', '--logging-format=json', '--log-flush-frequency=1s', '--hostname-override=Other', '--log-json-split-stream']);
    expect(cfg.logging).toMatchObject({ verbosity: 5, format: 'json', flushFrequency: '1s' });
    expect((cfg.logging.options as Record<string, Record<string, unknown>>)['json']).toEqual({ infoBufferSize: '0', splitStream: true });
    expect(cfg.hostnameOverride).toBe('other');
    expect(apply([]).logging.verbosity).toBe(1);
    expect(apply([]).hostnameOverride).toBe('from-file');
  });

  it('adds --backend-plugin to the file\'s list', () => {
    const withPlugins = { ...FILE, backendPlugins: ['a'] };
    expect(applyFlags(withPlugins, parseFlags(['--backend-plugin=b', '--backend-plugin=a']), true).backendPlugins).toEqual(['a', 'b']);
  });
});

describe('formatHelp', () => {
  it('lists flags with types and defaults, and hides deprecated ones', () => {
    const help = formatHelp();
    expect(help).toContain('Usage:');
    expect(help).toMatch(/--iptables-sync-period duration\s+.*\(default 30s\)/);
    expect(help).toMatch(/-h, --help\s+Print this help/);
    expect(help).toMatch(/-v, --v int/);
    expect(help).toMatch(/--proxy-mode string/);
    expect(help).toContain('--dry-run');
    expect(help).toContain('KubeProxyIPVS=true|false (DEPRECATED - default=true)');
    expect(help).not.toContain('PreferSameTrafficDistribution=');
    expect(help).not.toMatch(/--healthz-port|--metrics-port/);
    expect(help).not.toMatch(/^\s+--logtostderr/m);
    expect(help).toMatch(/Also accepted, with a deprecation warning: .*--logtostderr/);
  });
});
