import { ExecaCommandExecutor, NodeHostFs } from '@kube-proxy/core';
import { detectHost } from './detect-host.js';

// The real detector on the machine running the tests. Development and CI machines of this project
// have no IPVS in their kernel (CONFIG_IP_VS is not set), so this must say so, with evidence.
describe('detectHost on this machine', () => {
  it('finds no IPVS and explains why', async () => {
    const caps = await detectHost(new NodeHostFs(), new ExecaCommandExecutor());
    expect(caps.ipvs.available).toBe(false);
    expect(caps.ipvs.reason).toMatch(/^IPVS unavailable: /);
    expect(caps.kernelRelease).not.toBe('');
    // Every verdict carries its evidence.
    expect(caps.nftables.reason).not.toBe('');
    expect(caps.iptablesVariantReason).not.toBe('');
  }, 30_000);
});
