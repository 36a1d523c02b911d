import { decodeConfiguration } from './decode.js';
import { defaultConfiguration } from './defaults.js';
import { ConfigError } from './errors.js';

const HEAD = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n';

function decodeError(text: string): ConfigError {
  try {
    decodeConfiguration(text, 'test.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('decodeConfiguration', () => {
  it('decodes a minimal YAML document to the defaults', () => {
    expect(decodeConfiguration(HEAD, 'x.yaml')).toEqual(defaultConfiguration());
  });

  it('decodes YAML with nested fields and applies defaults around them', () => {
    const cfg = decodeConfiguration(
      `${HEAD}mode: ipvs\niptables:\n  masqueradeBit: 10\nipvs:\n  scheduler: wrr\n  minSyncPeriod: 2s\nclusterCIDR: 10.244.0.0/16\nnodePortAddresses: [10.0.0.0/8]\nfeatureGates:\n  AllBeta: true\n`,
      'x.yaml',
    );
    expect(cfg.mode).toBe('ipvs');
    expect(cfg.iptables).toEqual({ masqueradeBit: 10, masqueradeAll: false, localhostNodePorts: true, syncPeriod: '30s', minSyncPeriod: '1s' });
    expect(cfg.ipvs.scheduler).toBe('wrr');
    expect(cfg.ipvs.minSyncPeriod).toBe('2s');
    expect(cfg.nodePortAddresses).toEqual(['10.0.0.0/8']);
    expect(cfg.featureGates).toEqual({ AllBeta: true });
    expect(cfg.clusterCIDR).toBe('10.244.0.0/16');
  });

  it('decodes JSON, including tab-indented JSON', () => {
    const json = '{\n\t"apiVersion": "kubeproxy.config.k8s.io/v1alpha1",\n\t"kind": "KubeProxyConfiguration",\n\t"oomScoreAdj": -500\n}';
    expect(decodeConfiguration(json, 'x.json').oomScoreAdj).toBe(-500);
  });

  it('normalises durations to the Go form', () => {
    const cfg = decodeConfiguration(`${HEAD}configSyncPeriod: 1m\nconntrack:\n  tcpEstablishedTimeout: 2h\n`, 'x');
    expect(cfg.configSyncPeriod).toBe('1m0s');
    expect(cfg.conntrack.tcpEstablishedTimeout).toBe('2h0m0s');
  });

  it('treats null like an absent field, but keeps null lists', () => {
    const cfg = decodeConfiguration(`${HEAD}oomScoreAdj: null\nnodePortAddresses: null\nipvs: null\n`, 'x');
    expect(cfg.oomScoreAdj).toBe(-999);
    expect(cfg.nodePortAddresses).toBeNull();
  });

  it('accepts logging.flushFrequency as nanoseconds and logging.vmodule (then drops it)', () => {
    const cfg = decodeConfiguration(
      `${HEAD}logging:\n  flushFrequency: 2000000000\n  vmodule:\n  - filePattern: proxier.go\n    verbosity: 4\n  options:\n    json:\n      infoBufferSize: 64Ki\n`,
      'x',
    );
    expect(cfg.logging.flushFrequency).toBe('2s');
    expect(cfg.logging).not.toHaveProperty('vmodule');
    expect(cfg.logging.options).toEqual({ json: { infoBufferSize: '64Ki' }, text: { infoBufferSize: '0' } });
  });

  it('accepts the backendPlugins extension', () => {
    expect(decodeConfiguration(`${HEAD}backendPlugins: ["@acme/kp-ebpf"]\n`, 'x').backendPlugins).toEqual(['@acme/kp-ebpf']);
  });

  it('rejects an unknown field anywhere, naming its path', () => {
    const e = decodeError(`${HEAD}iptables:\n  masqueradeBitz: 14\n`);
    expect(e.field).toBe('iptables.masqueradeBitz');
    expect(e.message).toContain('unknown field "iptables.masqueradeBitz"');
    expect(e.source).toBe('test.yaml');
    expect(decodeError(`${HEAD}bogus: 1\n`).message).toBe('bogus: unknown field "bogus"');
    expect(decodeError(`${HEAD}logging:\n  options:\n    xml: {}\n`).field).toBe('logging.options.xml');
  });

  it('is case-sensitive about field names', () => {
    expect(decodeError(`${HEAD}BindAddress: 1.2.3.4\n`).field).toBe('BindAddress');
  });

  it.each([
    ['iptables:\n  masqueradeBit: "14"\n', 'iptables.masqueradeBit', 'must be an integer, got string "14"'],
    ['iptables:\n  masqueradeBit: 1.5\n', 'iptables.masqueradeBit', 'must be an integer'],
    ['oomScoreAdj: 99999999999\n', 'oomScoreAdj', 'must be an integer in [-2147483648, 2147483647]'],
    ['bindAddressHardFail: "yes"\n', 'bindAddressHardFail', 'must be a boolean'],
    ['iptables: []\n', 'iptables', 'must be an object, got a list'],
    ['iptables:\n  syncPeriod: 30\n', 'iptables.syncPeriod', 'must be a duration string'],
    ['iptables:\n  syncPeriod: 30x\n', 'iptables.syncPeriod', 'unknown unit'],
    ['nodePortAddresses: 10.0.0.0/8\n', 'nodePortAddresses', 'must be a list'],
    ['nodePortAddresses: [1, 2]\n', 'nodePortAddresses[0]', 'must be a string, got number 1'],
    ['featureGates:\n  Foo: "true"\n', 'featureGates.Foo', 'must be a boolean'],
    ['clientConnection:\n  qps: fast\n', 'clientConnection.qps', 'must be a number'],
    ['logging:\n  verbosity: -1\n', 'logging.verbosity', 'must be an integer in [0, 4294967295]'],
    ['mode: 3\n', 'mode', 'must be a string'],
  ])('rejects wrong types: %j', (body, field, message) => {
    const e = decodeError(HEAD + body);
    expect(e.field).toBe(field);
    expect(e.message).toContain(message);
  });

  it('requires our apiVersion and kind', () => {
    expect(decodeError('kind: KubeProxyConfiguration\n').field).toBe('apiVersion');
    expect(decodeError('apiVersion: kubeproxy.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n').message).toBe(
      'apiVersion: must be "kubeproxy.config.k8s.io/v1alpha1", got string "kubeproxy.config.k8s.io/v1beta1"',
    );
    expect(decodeError('apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n').field).toBe('kind');
    expect(decodeError('apiVersion: kubeproxy.config.k8s.io/v1alpha1\n').field).toBe('kind');
  });

  it('rejects empty, non-object and malformed documents', () => {
    expect(decodeError('').message).toContain('empty');
    expect(decodeError('- a\n- b\n').message).toContain('expected a KubeProxyConfiguration object');
    expect(decodeError(`${HEAD}mode: [\n`).message).toContain('not valid YAML or JSON');
    expect(decodeError(`${HEAD}mode: a\nmode: b\n`).message).toContain('duplicated mapping key');
  });
});
