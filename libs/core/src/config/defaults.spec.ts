import { applyDefaults, defaultConfiguration } from './defaults.js';

describe('defaultConfiguration', () => {
  it('has upstream v1alpha1 defaults', () => {
    const cfg = defaultConfiguration();
    expect(cfg).toMatchObject({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      bindAddress: '0.0.0.0',
      healthzBindAddress: '0.0.0.0:10256',
      metricsBindAddress: '127.0.0.1:10249',
      oomScoreAdj: -999,
      mode: '',
      configSyncPeriod: '15m0s',
      featureGates: {},
      clientConnection: { contentType: 'application/vnd.kubernetes.protobuf', qps: 5, burst: 10, kubeconfig: '', acceptContentTypes: '' },
      logging: { format: 'text', flushFrequency: '5s', verbosity: 0 },
      iptables: { masqueradeBit: 14, masqueradeAll: false, localhostNodePorts: true, syncPeriod: '30s', minSyncPeriod: '1s' },
      ipvs: { syncPeriod: '30s', minSyncPeriod: '0s', scheduler: '', excludeCIDRs: null, strictARP: false, tcpTimeout: '0s', tcpFinTimeout: '0s', udpTimeout: '0s' },
      nftables: { masqueradeBit: 14, masqueradeAll: false, syncPeriod: '30s', minSyncPeriod: '1s' },
      conntrack: {
        maxPerCore: 32768,
        min: 131072,
        tcpEstablishedTimeout: '24h0m0s',
        tcpCloseWaitTimeout: '1h0m0s',
        tcpBeLiberal: false,
        udpTimeout: '0s',
        udpStreamTimeout: '0s',
      },
      detectLocalMode: '',
      detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' },
      clusterCIDR: '',
      nodePortAddresses: null,
      portRange: '',
      udpIdleTimeout: '250ms',
      backendPlugins: [],
    });
  });

  it('returns a fresh object each time', () => {
    const a = defaultConfiguration();
    a.iptables.masqueradeBit = 3;
    expect(defaultConfiguration().iptables.masqueradeBit).toBe(14);
  });
});

describe('applyDefaults', () => {
  it('appends the default ports to addresses given without one', () => {
    const cfg = applyDefaults({ healthzBindAddress: '10.0.0.1', metricsBindAddress: '::1' });
    expect(cfg.healthzBindAddress).toBe('10.0.0.1:10256');
    expect(cfg.metricsBindAddress).toBe('[::1]:10249');
  });

  it('keeps addresses that already have a port', () => {
    const cfg = applyDefaults({ healthzBindAddress: '10.0.0.1:1234', metricsBindAddress: '[::]:9999' });
    expect(cfg.healthzBindAddress).toBe('10.0.0.1:1234');
    expect(cfg.metricsBindAddress).toBe('[::]:9999');
  });

  it('uses IPv6 wildcard/loopback defaults for an IPv6 bindAddress', () => {
    const cfg = applyDefaults({ bindAddress: '::' });
    expect(cfg.healthzBindAddress).toBe('[::]:10256');
    expect(cfg.metricsBindAddress).toBe('[::1]:10249');
  });

  it('defaults pointer fields only when absent, so explicit zeros stay', () => {
    const cfg = applyDefaults({
      oomScoreAdj: 0,
      iptables: { masqueradeBit: 0, localhostNodePorts: false },
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    });
    expect(cfg.oomScoreAdj).toBe(0);
    expect(cfg.iptables.masqueradeBit).toBe(0);
    expect(cfg.iptables.localhostNodePorts).toBe(false);
    expect(cfg.conntrack).toMatchObject({ maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' });
  });

  it('defaults zero-valued plain fields, as upstream does', () => {
    const cfg = applyDefaults({
      iptables: { syncPeriod: '0s', minSyncPeriod: '0s' },
      clientConnection: { qps: 0, burst: 0, contentType: '' },
      configSyncPeriod: '0s',
    });
    expect(cfg.iptables.syncPeriod).toBe('30s');
    expect(cfg.iptables.minSyncPeriod).toBe('1s');
    expect(cfg.clientConnection).toMatchObject({ qps: 5, burst: 10, contentType: 'application/vnd.kubernetes.protobuf' });
    expect(cfg.configSyncPeriod).toBe('15m0s');
  });

  it('keeps given values and lists', () => {
    const cfg = applyDefaults({ mode: 'nftables', nodePortAddresses: ['primary'], ipvs: { excludeCIDRs: [] }, featureGates: { AllBeta: true } });
    expect(cfg.mode).toBe('nftables');
    expect(cfg.nodePortAddresses).toEqual(['primary']);
    expect(cfg.ipvs.excludeCIDRs).toEqual([]);
    expect(cfg.featureGates).toEqual({ AllBeta: true });
  });
});
