import { BACKEND_PLUGIN_API_VERSION, defaultConfiguration, nullLogger, type BackendPlugin, type HostCapabilities, type KubeProxyConfiguration, type Logger } from '@kube-proxy/core';
import { BackendRegistry, PluginContractError } from '../registry/backend-registry.js';
import {
  DEFAULTED_MODE_WARNING,
  IPVS_DEPRECATION_MESSAGE,
  IPVS_DEPRECATION_WARNING,
  IPVS_KEPT_NOTE,
  ModeSelectionError,
  REASON_PROXY_MODE_DEFAULTED,
  recordModeEvents,
  selectMode,
} from './select-mode.js';

function host(ipvs: boolean): HostCapabilities {
  const t = { present: true, version: '1' };
  return {
    kernelRelease: '6.1.0',
    ipvs: { available: ipvs, reason: ipvs ? 'ip_vs in modules.builtin' : 'CONFIG_IP_VS is not set' },
    nftables: { available: true, reason: '' },
    tools: { iptables: t, ip6tables: t, ipset: t, ipvsadm: t, nft: t, conntrack: t },
    iptablesVariant: 'nft',
    iptablesVariantReason: '',
    iptablesRandomFully: true,
  };
}

const backend = (name: string, usable: (h: HostCapabilities) => boolean): BackendPlugin => ({
  apiVersion: BACKEND_PLUGIN_API_VERSION,
  name,
  version: '1.0.0',
  detect: (h) => ({ usable: usable(h), reason: `${name} verdict` }),
  register: () => undefined,
});

function registry(): BackendRegistry {
  const r = new BackendRegistry();
  r.register(backend('iptables', () => true), 'builtin');
  r.register(backend('ipvs', (h) => h.ipvs.available), 'builtin');
  r.register(backend('userspace', () => true), 'builtin');
  return r;
}

describe('selectMode', () => {
  const infos: Array<[string, unknown]> = [];
  const logger: Logger = { ...nullLogger, info: (m, meta) => void infos.push([m, meta]), child: () => logger };
  beforeEach(() => (infos.length = 0));

  it('auto picks ipvs when the kernel supports it', async () => {
    const p = await selectMode({ requested: '', registry: registry(), host: host(true), logger, dryRun: false });
    expect(p.name).toBe('ipvs');
  });

  it('choosing ipvs logs upstream\'s deprecation warning (error level, as upstream) with the alternative', async () => {
    const errors: Array<[string, unknown]> = [];
    const l: Logger = { ...logger, error: (m, meta) => void errors.push([m, meta]) };
    await selectMode({ requested: '', registry: registry(), host: host(true), logger: l, dryRun: false });
    expect(errors).toEqual([[IPVS_DEPRECATION_WARNING, expect.objectContaining({ alternative: '--proxy-mode=iptables' })]]);
    expect(IPVS_DEPRECATION_MESSAGE).toBe("The ipvs proxier is now deprecated and may be removed in a future release. Please use 'nftables' instead.");
    // Upstream's words first, then what this build does about upstream's removal.
    expect(IPVS_DEPRECATION_WARNING).toBe(
      "The ipvs proxier is now deprecated and may be removed in a future release. Please use 'nftables' instead. " +
        "kube-proxy-ts keeps the ipvs mode, programming exactly upstream's rules, after upstream disables it by default (v1.40) " +
        'and removes it (v1.43); --feature-gates=KubeProxyIPVS=false refuses it, as upstream.',
    );
    expect(IPVS_DEPRECATION_WARNING.endsWith(IPVS_KEPT_NOTE)).toBe(true);
    errors.length = 0;
    await selectMode({ requested: 'iptables', registry: registry(), host: host(true), logger: l, dryRun: false });
    expect(errors).toEqual([]);
  });

  it('hands the configuration to detect() so a backend can refuse on it (auto then falls back)', async () => {
    const r = new BackendRegistry();
    r.register(backend('iptables', () => true), 'builtin');
    r.register({ ...backend('ipvs', () => true), detect: (_h: HostCapabilities, c?: KubeProxyConfiguration) => ({ usable: c?.ipvs.scheduler !== 'mh', reason: 'scheduler check' }) }, 'builtin');
    const config = defaultConfiguration();
    expect((await selectMode({ requested: '', registry: r, host: host(true), logger, dryRun: false, config })).name).toBe('ipvs');
    const mh = { ...config, ipvs: { ...config.ipvs, scheduler: 'mh' } };
    expect((await selectMode({ requested: '', registry: r, host: host(true), logger, dryRun: false, config: mh })).name).toBe('iptables');
  });

  it('auto falls back to iptables and logs why IPVS was not chosen', async () => {
    const p = await selectMode({ requested: 'auto', registry: registry(), host: host(false), logger, dryRun: false });
    expect(p.name).toBe('iptables');
    expect(JSON.stringify(infos)).toContain('ipvs verdict');
  });

  it('an unknown mode fails with exit code 2 and lists the registered modes', async () => {
    const err = await selectMode({ requested: 'bpf', registry: registry(), host: host(false), logger, dryRun: false }).catch((e) => e);
    expect(err).toBeInstanceOf(ModeSelectionError);
    expect(err.exitCode).toBe(2);
    expect(err.message).toBe('unknown proxy mode "bpf"; registered modes: iptables, ipvs, userspace');
  });

  it('an explicitly requested but unusable mode fails with exit code 1 and the reason', async () => {
    const err = await selectMode({ requested: 'ipvs', registry: registry(), host: host(false), logger, dryRun: false }).catch((e) => e);
    expect(err.exitCode).toBe(1);
    expect(err.message).toContain('ipvs verdict');
  });

  it('with KubeProxyIPVS off, auto never picks ipvs, even where the kernel has it', async () => {
    const config = { ...defaultConfiguration(), featureGates: { KubeProxyIPVS: false } };
    const p = await selectMode({ requested: '', registry: registry(), host: host(true), logger, dryRun: false, config });
    expect(p.name).toBe('iptables');
    expect(JSON.stringify(infos)).toContain('the KubeProxyIPVS feature gate is off');
    // The gate's default (on) keeps today's choice.
    expect((await selectMode({ requested: '', registry: registry(), host: host(true), logger, dryRun: false, config: defaultConfiguration() })).name).toBe('ipvs');
  });

  it('with KubeProxyIPVS off, an explicit ipvs is refused with exit code 1, listing the modes (even in --dry-run)', async () => {
    const config = { ...defaultConfiguration(), mode: 'ipvs', featureGates: { KubeProxyIPVS: false } };
    const err = await selectMode({ requested: 'ipvs', registry: registry(), host: host(true), logger, dryRun: true, config }).catch((e) => e);
    expect(err).toBeInstanceOf(ModeSelectionError);
    expect(err.exitCode).toBe(1);
    expect(err.message).toBe(
      'invalid configuration: mode: Invalid value: "ipvs": must be iptables,nftables,userspace or blank (blank means the best-available proxy [currently iptables])',
    );
  });

  it('warns when the mode is left to its default, and only then', async () => {
    const warnings: string[] = [];
    const l: Logger = { ...logger, warn: (m) => void warnings.push(m) };
    await selectMode({ requested: '', registry: registry(), host: host(false), logger: l, dryRun: false });
    await selectMode({ requested: 'auto', registry: registry(), host: host(false), logger: l, dryRun: false });
    expect(warnings).toEqual([DEFAULTED_MODE_WARNING, DEFAULTED_MODE_WARNING]);
    expect(DEFAULTED_MODE_WARNING).toContain("from 'iptables' to 'nftables'");
    warnings.length = 0;
    await selectMode({ requested: 'iptables', registry: registry(), host: host(false), logger: l, dryRun: false });
    expect(warnings).toEqual([]);
  });

  it('--dry-run renders even when the backend could not run on this host', async () => {
    const p = await selectMode({ requested: 'ipvs', registry: registry(), host: host(false), logger, dryRun: true });
    expect(p.name).toBe('ipvs');
  });
});

describe('recordModeEvents', () => {
  const record = (requested: string, selected: string): Array<[string, string]> => {
    const events: Array<[string, string]> = [];
    recordModeEvents({ warning: (reason, note) => void events.push([reason, note]) }, requested, selected);
    return events;
  };

  it('records the defaulted mode and the IPVS deprecation as Node warnings', () => {
    expect(record('', 'ipvs')).toEqual([
      [REASON_PROXY_MODE_DEFAULTED, DEFAULTED_MODE_WARNING],
      ['IPVSDeprecation', IPVS_DEPRECATION_WARNING],
    ]);
    expect(record('auto', 'iptables')).toEqual([[REASON_PROXY_MODE_DEFAULTED, DEFAULTED_MODE_WARNING]]);
    expect(record('ipvs', 'ipvs')).toEqual([['IPVSDeprecation', IPVS_DEPRECATION_WARNING]]);
    expect(record('nftables', 'nftables')).toEqual([]);
  });
});

describe('BackendRegistry', () => {
  it('refuses a plugin speaking another contract version, naming both versions', () => {
    const r = new BackendRegistry();
    expect(() => r.register({ ...backend('x', () => true), apiVersion: 'kube-proxy.backend/v0' }, 'my-plugin')).toThrow(
      new PluginContractError('my-plugin: unsupported backend plugin apiVersion "kube-proxy.backend/v0"; this kube-proxy supports "kube-proxy.backend/v1"'),
    );
  });

  it('refuses malformed plugins and duplicate names', () => {
    const r = new BackendRegistry();
    expect(() => r.register(42, 'p')).toThrow(/does not export a backend plugin object/);
    expect(() => r.register({ ...backend('x', () => true), detect: undefined }, 'p')).toThrow(/no detect\(\)/);
    expect(() => r.register({ ...backend('Bad Name', () => true) }, 'p')).toThrow(/must match/);
    r.register(backend('x', () => true), 'a');
    expect(() => r.register(backend('x', () => true), 'b')).toThrow(/already registered/);
  });
});
