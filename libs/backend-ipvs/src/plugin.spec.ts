import { BACKEND_PLUGIN_API_VERSION, type HostCapabilities } from '@kube-proxy/core';
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

  it('refuses to register rather than pretend to program IPVS', () => {
    expect(() => ipvsBackend.register({} as never, {} as never)).toThrow(/not implemented.*--proxy-mode=iptables/);
  });
});
