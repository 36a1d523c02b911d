import { BACKEND_PLUGIN_API_VERSION, CLOCK, COMMAND_EXECUTOR, LOGGER, PROVIDER, SYSCTL, defaultConfiguration, type HostCapabilities, type Provider } from '@kube-proxy/core';
import { FakeClock, FakeCommandExecutor, FakeSysctl, RecordingLogger, TEST_HOST, fakeContainer, testContext } from '@kube-proxy/core/testing';
import { ipvsBackend } from './plugin.js';

function host(ipvsAvailable: boolean, reason: string): HostCapabilities {
  const absent = { present: false };
  return {
    kernelRelease: '6.1.0',
    ipvs: { available: ipvsAvailable, reason },
    nftables: { available: false, reason: 'n/a' },
    tools: { iptables: absent, ip6tables: absent, ipset: absent, ipvsadm: absent, nft: absent, conntrack: absent },
    iptablesVariantReason: 'n/a',
    iptablesRandomFully: false,
  };
}

describe('ipvs backend plugin', () => {
  it('speaks the current plugin contract under the mode name "ipvs" with its package version', () => {
    expect(ipvsBackend.apiVersion).toBe(BACKEND_PLUGIN_API_VERSION);
    expect(ipvsBackend.name).toBe('ipvs');
    expect(ipvsBackend.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('is unusable when the kernel lacks IPVS, passing the detector reason through', async () => {
    const r = await ipvsBackend.detect(host(false, 'no /proc/net/ip_vs; CONFIG_IP_VS is not set'));
    expect(r).toEqual({ usable: false, reason: 'no /proc/net/ip_vs; CONFIG_IP_VS is not set' });
  });

  it('is usable when the detector found IPVS and its tools', async () => {
    expect((await ipvsBackend.detect(host(true, 'ip_vs loaded'))).usable).toBe(true);
  });

  it('checks the configured scheduler against the kernel\'s scheduler modules (upstream CanUseIPVSProxier)', async () => {
    const h = { ...host(true, 'ip_vs loaded'), ipvs: { available: true, reason: 'ip_vs loaded', schedulers: ['rr', 'wrr', 'sh'] } };
    const config = (scheduler: string) => ({ ...defaultConfiguration(), ipvs: { ...defaultConfiguration().ipvs, scheduler } });
    expect((await ipvsBackend.detect(h, config(''))).usable).toBe(true);
    expect((await ipvsBackend.detect(h, config('sh'))).usable).toBe(true);
    expect(await ipvsBackend.detect(h, config('mh'))).toEqual({
      usable: false,
      reason: 'IPVS scheduler "mh" is not available in this kernel (no ip_vs_mh module; found: rr, wrr, sh)',
    });
    // No module evidence at all: the scheduler cannot be checked, IPVS itself decides.
    expect((await ipvsBackend.detect(host(true, 'ip_vs loaded'), config('mh'))).usable).toBe(true);
  });

  it('registers a Provider per run without touching the host (sysctls wait for the first sync)', () => {
    const exec = new FakeCommandExecutor();
    const sysctl = new FakeSysctl();
    const { container } = fakeContainer([
      [LOGGER, new RecordingLogger()],
      [CLOCK, new FakeClock()],
      [COMMAND_EXECUTOR, exec],
      [SYSCTL, sysctl],
    ]);
    const context = testContext({ dryRun: false, host: { ...TEST_HOST, ipvs: { available: true, reason: 'test' } } });
    ipvsBackend.register(container, context);
    const provider = container.resolve<Provider>(PROVIDER);
    expect(typeof provider.syncLoop).toBe('function');
    expect(exec.calls).toEqual([]);
    expect(sysctl.writes).toEqual([]);
    provider.stop();
  });
});
