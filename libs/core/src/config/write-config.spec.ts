import { decodeConfiguration } from './decode.js';
import { applyDefaults, defaultConfiguration } from './defaults.js';
import { encodeConfiguration } from './write-config.js';

describe('encodeConfiguration', () => {
  it('writes apiVersion and kind first, then the fields alphabetically', () => {
    const text = encodeConfiguration(defaultConfiguration());
    const lines = text.split('\n');
    expect(lines[0]).toBe('apiVersion: kubeproxy.config.k8s.io/v1alpha1');
    expect(lines[1]).toBe('kind: KubeProxyConfiguration');
    const topLevel = lines.slice(2).filter((l) => /^[a-zA-Z]/.test(l)).map((l) => l.split(':')[0]);
    expect(topLevel).toEqual([...topLevel].sort());
    expect(text).toContain('healthzBindAddress: 0.0.0.0:10256');
    expect(text).toContain('  tcpEstablishedTimeout: 24h0m0s');
    expect(text).toContain('nodePortAddresses: null');
  });

  it('round-trips through decodeConfiguration', () => {
    const cfgs = [
      defaultConfiguration(),
      applyDefaults({
        mode: 'ipvs',
        bindAddress: '::',
        hostnameOverride: 'node-1',
        clusterCIDR: '10.0.0.0/8,fd00::/48',
        nodePortAddresses: ['primary'],
        ipvs: { excludeCIDRs: ['10.1.0.0/16'], scheduler: 'sh', strictARP: true },
        featureGates: { AllBeta: false },
        conntrack: { maxPerCore: 0, tcpCloseWaitTimeout: '0s' },
        backendPlugins: ['kp-plugin-x'],
        portRange: '30000-32767',
        showHiddenMetricsForVersion: '1.33',
      }),
    ];
    for (const cfg of cfgs) {
      expect(decodeConfiguration(encodeConfiguration(cfg), 'roundtrip')).toEqual(cfg);
    }
  });
});
