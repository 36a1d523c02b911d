import { FakeCommandExecutor, FakeHostFs } from '../../testing/host-fakes.js';
import { detectHostCapabilities } from './detect.js';
import type { HostEvidence } from './types.js';

/** nft installed (1.0.6) and the kernel's files for IPVS; every *-save dump empty. */
function host(): { fs: FakeHostFs; exec: FakeCommandExecutor } {
  const fs = new FakeHostFs({ '/proc/net/ip_vs': 'IP Virtual Server version 1.2.1 (size=4096)\n' }, '6.1.0');
  const exec = new FakeCommandExecutor()
    .on({ command: 'nft', args: ['--version'] }, { stdout: 'nftables v1.0.6 (Lester Gooch #5)\n' })
    .on((c) => c.command.endsWith('-save'), { stdout: '' });
  return { fs, exec };
}

// Core gathers evidence and judges no mode: the verdicts come from the backends, through the host app.
describe('detectHostCapabilities: evidence, and the verdicts it is given', () => {
  it('gives the evidence it read, and says a mode nobody judged is not available', async () => {
    const { fs, exec } = host();
    const caps = await detectHostCapabilities(fs, exec, undefined, { env: {} });
    expect(caps.ipvs).toEqual({ available: false, reason: 'IPVS: not judged (no verdict given to host detection)' });
    expect(caps.nftables).toEqual({ available: false, reason: 'nftables: not judged (no verdict given to host detection)' });
    expect(caps.evidence?.kernel.procNetIpVs).toBe(true);
    expect(caps.evidence?.kernel.release).toBe('6.1.0');
    expect(caps.evidence?.tools.nft).toEqual({ present: true, version: '1.0.6', banner: 'nftables v1.0.6 (Lester Gooch #5)' });
    expect(caps.evidence?.tools.ipvsadm.present).toBe(false);
    // No verdict, no probe beyond --version and the *-save dumps.
    expect(exec.calls.filter((c) => c.command === 'nft').map((c) => c.args)).toEqual([['--version']]);
  });

  it("fills HostCapabilities' ipvs and nftables from the verdicts it is given, with the evidence, executor and env", async () => {
    const { fs, exec } = host();
    const seen: { evidence: HostEvidence; env: Readonly<Record<string, string | undefined>> }[] = [];
    const caps = await detectHostCapabilities(fs, exec, undefined, {
      env: { X: '1' },
      verdicts: {
        ipvs: (evidence, _exec, env) => {
          seen.push({ evidence, env });
          return { available: evidence.kernel.procNetIpVs, reason: 'ipvs judged', schedulers: ['rr'] };
        },
        nftables: async (evidence, e) => {
          const r = await e.run('nft', ['--check', '-f', '-']);
          return { available: evidence.tools.nft.present && r.exitCode === 0, reason: 'nftables judged' };
        },
      },
    });
    expect(caps.ipvs).toEqual({ available: true, reason: 'ipvs judged', schedulers: ['rr'] });
    expect(caps.nftables).toEqual({ available: false, reason: 'nftables judged' }); // nft --check is not scripted: not installed
    expect(seen).toHaveLength(1);
    expect(seen[0]?.evidence).toBe(caps.evidence);
    expect(seen[0]?.env).toEqual({ X: '1' });
  });
});
