import { gzipSync } from 'node:zlib';
import { FakeCommandExecutor, FakeHostFs, RecordingLogger } from '@kube-proxy/core/testing';
import { detectHost } from './detect-host.js';

const VERSIONS: Record<string, string> = {
  iptables: 'iptables v1.8.9 (nf_tables)\n',
  ip6tables: 'ip6tables v1.8.9 (nf_tables)\n',
  ipset: 'ipset v7.17, protocol version: 7\n',
  ipvsadm: 'ipvsadm v1.31 2019/12/24 (compiled with popt and IPVS v1.2.1)\n',
  nft: 'nftables v1.0.6 (Lester Gooch #5)\n',
  conntrack: 'conntrack v1.4.7 (conntrack-tools)\n',
};

/** An executor with the given tools installed, empty rule dumps, and a passing `nft --check`. */
function executor(installed: readonly string[], versions: Record<string, string> = VERSIONS): FakeCommandExecutor {
  const exec = new FakeCommandExecutor();
  for (const tool of installed) exec.on({ command: tool, args: ['--version'] }, { stdout: versions[tool] ?? '' });
  for (const save of ['iptables-nft-save', 'ip6tables-nft-save', 'iptables-legacy-save', 'ip6tables-legacy-save']) {
    exec.on({ command: save }, { stdout: '' });
  }
  if (installed.includes('nft')) exec.on({ command: 'nft', args: ['--check', '-f', '-'] }, { exitCode: 0 });
  return exec;
}

const configGz = (text: string): Buffer => gzipSync(Buffer.from(text));
const ALL_TOOLS = ['iptables', 'ip6tables', 'ipset', 'ipvsadm', 'nft', 'conntrack'];

describe('detectHost (core evidence, built-in verdicts)', () => {
  it("reads this machine's evidence: no IPVS in the kernel, no ipvsadm", async () => {
    const fs = new FakeHostFs(
      { '/proc/config.gz': configGz('CONFIG_NF_TABLES=y\nCONFIG_MODULES_USE_ELF_RELA=y\n# CONFIG_MODULES is not set\n# CONFIG_IP_VS is not set\n') },
      '6.18.44-fc-v782',
    );
    const exec = executor(['iptables', 'ip6tables', 'ipset', 'nft', 'conntrack']);
    const caps = await detectHost(fs, exec, undefined, { env: {} });

    expect(caps.kernelRelease).toBe('6.18.44-fc-v782');
    expect(caps.ipvs.available).toBe(false);
    expect(caps.ipvs.reason).toContain('the running kernel is built without IPVS (/proc/config.gz: # CONFIG_IP_VS is not set)');
    expect(caps.ipvs.reason).toContain('ipvsadm is not installed');
    expect(caps.ipvs.reason).toContain('/proc/net/ip_vs absent');
    expect(caps.ipvs.reason).toContain('/proc/modules absent');
    expect(caps.ipvs.reason).toContain('/lib/modules/6.18.44-fc-v782 absent');
    expect(caps.ipvs.reason).toContain('ipset 7.17 present');
    expect(caps.nftables).toEqual({ available: true, reason: 'nftables available: nft 1.0.6 >= 1.0.1, kernel 6.18.44-fc-v782 >= 5.13, nft --check passed' });
    expect(caps.tools).toEqual({
      iptables: { present: true, version: '1.8.9' },
      ip6tables: { present: true, version: '1.8.9' },
      ipset: { present: true, version: '7.17' },
      ipvsadm: { present: false },
      nft: { present: true, version: '1.0.6' },
      conntrack: { present: true, version: '1.4.7' },
    });
    expect(caps.iptablesVariant).toBe('nft');
    expect(caps.iptablesVariantReason).toContain('system default (iptables is nft)');
    expect(caps.iptablesRandomFully).toBe(true);
  });

  it('only reads: every command it runs is a --version, a *-save dump or nft --check', async () => {
    const exec = executor(ALL_TOOLS);
    await detectHost(new FakeHostFs(), exec, undefined, { env: {} });
    for (const call of exec.calls) {
      const ok =
        call.args[0] === '--version' || call.command.endsWith('-save') || (call.command === 'nft' && call.args[0] === '--check');
      expect({ line: [call.command, ...call.args].join(' '), ok }).toEqual({ line: expect.any(String), ok: true });
    }
  });

  it('finds IPVS on a typical node with ip_vs in modules.builtin and the tools installed', async () => {
    const fs = new FakeHostFs(
      {
        '/proc/modules': 'nf_conntrack 180224 5 xt_conntrack, Live 0x0000000000000000\nbr_netfilter 32768 0 - Live 0x0\n',
        '/lib/modules/5.15.0-91-generic/modules.builtin':
          'kernel/net/netfilter/ipvs/ip_vs.ko\nkernel/net/netfilter/ipvs/ip_vs_rr.ko\nkernel/net/netfilter/ipvs/ip_vs_wrr.ko\nkernel/net/netfilter/ipvs/ip_vs_sh.ko\n',
        '/lib/modules/5.15.0-91-generic/modules.dep': 'kernel/net/netfilter/xt_set.ko: kernel/net/netfilter/ipset/ip_set.ko\n',
      },
      '5.15.0-91-generic',
    );
    const caps = await detectHost(fs, executor(ALL_TOOLS), undefined, { env: {} });
    expect(caps.ipvs.available).toBe(true);
    expect(caps.ipvs.reason).toBe(
      'IPVS available: ip_vs is built in (/lib/modules/5.15.0-91-generic/modules.builtin); ipset 7.17 present; ipvsadm 1.31 present.',
    );
  });

  it('lists the schedulers the module lists show, for the backend to check --ipvs-scheduler against', async () => {
    const fs = new FakeHostFs(
      {
        '/lib/modules/6.1.0-57-amd64/modules.builtin': 'kernel/net/netfilter/nf_conntrack.ko\n',
        '/lib/modules/6.1.0-57-amd64/modules.dep':
          'kernel/net/netfilter/ipvs/ip_vs.ko: kernel/net/netfilter/nf_conntrack.ko\nkernel/net/netfilter/ipvs/ip_vs_rr.ko: kernel/net/netfilter/ipvs/ip_vs.ko\nkernel/net/netfilter/ipvs/ip_vs_mh.ko.xz: kernel/net/netfilter/ipvs/ip_vs.ko\n',
      },
      '6.1.0-57-amd64',
    );
    const caps = await detectHost(fs, executor(ALL_TOOLS), undefined, { env: {} });
    expect(caps.ipvs.available).toBe(true);
    expect(caps.ipvs.schedulers).toEqual(['rr', 'mh']);
  });

  it('refuses IPVS when both module lists were read and neither has nf_conntrack', async () => {
    const fs = new FakeHostFs(
      {
        '/lib/modules/6.1.0/modules.builtin': 'kernel/net/netfilter/ipvs/ip_vs.ko\n',
        '/lib/modules/6.1.0/modules.dep': 'kernel/net/bridge/bridge.ko:\n',
      },
      '6.1.0',
    );
    const caps = await detectHost(fs, executor(ALL_TOOLS), undefined, { env: {} });
    expect(caps.ipvs.available).toBe(false);
    expect(caps.ipvs.reason).toContain('the kernel has no nf_conntrack');
  });

  it('finds IPVS when it is loaded (/proc/net/ip_vs)', async () => {
    const fs = new FakeHostFs({ '/proc/net/ip_vs': 'IP Virtual Server version 1.2.1 (size=4096)\n' }, '6.1.0');
    const caps = await detectHost(fs, executor(ALL_TOOLS), undefined, { env: {} });
    expect(caps.ipvs).toEqual({ available: true, reason: 'IPVS available: ip_vs is loaded (/proc/net/ip_vs exists); ipset 7.17 present; ipvsadm 1.31 present.' });
  });

  it('accepts CONFIG_IP_VS=m when /lib/modules is not visible (the kernel loads modules on demand)', async () => {
    const fs = new FakeHostFs({ '/proc/config.gz': configGz('CONFIG_IP_VS=m\nCONFIG_IP_VS_RR=m\nCONFIG_NF_CONNTRACK=m\n') }, '6.1.0-13-amd64');
    const caps = await detectHost(fs, executor(ALL_TOOLS), undefined, { env: {} });
    expect(caps.ipvs.available).toBe(true);
    expect(caps.ipvs.reason).toContain('ip_vs is built as a module (/proc/config.gz: CONFIG_IP_VS=m); the kernel loads it on demand');
  });

  it('rejects CONFIG_IP_VS=m when /lib/modules is visible but has no ip_vs module', async () => {
    const fs = new FakeHostFs(
      {
        '/boot/config-6.1.0-13-amd64': 'CONFIG_IP_VS=m\n',
        '/lib/modules/6.1.0-13-amd64/modules.dep': 'kernel/net/bridge/br_netfilter.ko.xz: kernel/net/bridge/bridge.ko.xz\n',
      },
      '6.1.0-13-amd64',
    );
    const caps = await detectHost(fs, executor(ALL_TOOLS), undefined, { env: {} });
    expect(caps.ipvs.available).toBe(false);
    expect(caps.ipvs.reason).toContain('CONFIG_IP_VS=m but the ip_vs module is not installed in /lib/modules/6.1.0-13-amd64');
    expect(caps.ipvs.reason).toContain('kernel config read from /boot/config-6.1.0-13-amd64');
  });

  it('accepts an installed but not yet loaded module (modules.dep, compressed)', async () => {
    const fs = new FakeHostFs(
      { '/lib/modules/6.8.0/modules.dep': 'kernel/net/netfilter/ipvs/ip_vs.ko.zst: kernel/net/netfilter/nf_conntrack.ko.zst\n' },
      '6.8.0',
    );
    const caps = await detectHost(fs, executor(ALL_TOOLS), undefined, { env: {} });
    expect(caps.ipvs.available).toBe(true);
    expect(caps.ipvs.reason).toContain('installed as a module');
  });

  it('needs ipset and ipvsadm besides the kernel', async () => {
    const fs = new FakeHostFs({ '/proc/net/ip_vs': '' }, '6.1.0');
    const caps = await detectHost(fs, executor(['iptables', 'nft']), undefined, { env: {} });
    expect(caps.ipvs.available).toBe(false);
    expect(caps.ipvs.reason).toMatch(/^IPVS unavailable: ipvsadm is not installed; ipset is not installed\./);

    const old = await detectHost(fs, executor(ALL_TOOLS, { ...VERSIONS, ipset: 'ipset v5.4, protocol version: 5\n' }), undefined, { env: {} });
    expect(old.ipvs.reason).toContain('ipset 5.4 is older than 6.0');
  });

  it('says so when there is no evidence at all', async () => {
    const caps = await detectHost(new FakeHostFs({}, '6.1.0'), executor(ALL_TOOLS), undefined, { env: {} });
    expect(caps.ipvs.available).toBe(false);
    expect(caps.ipvs.reason).toContain('no evidence of IPVS in the kernel');
    expect(caps.ipvs.reason).toContain('no kernel config');
  });

  describe('iptables variant', () => {
    const KUBELET_MANGLE = '*mangle\n:PREROUTING ACCEPT [0:0]\n:KUBE-IPTABLES-HINT - [0:0]\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n';
    const rules = (n: number) => `*filter\n:INPUT ACCEPT [0:0]\n${'-A INPUT -j ACCEPT\n'.repeat(n)}COMMIT\n`;

    it("prefers the backend with kubelet's chains (nft checked first, with -t mangle)", async () => {
      const exec = executor(ALL_TOOLS).on({ command: 'iptables-nft-save', args: ['-t', 'mangle'] }, { stdout: KUBELET_MANGLE });
      const caps = await detectHost(new FakeHostFs(), exec, undefined, { env: {} });
      expect(caps.iptablesVariant).toBe('nft');
      expect(caps.iptablesVariantReason).toContain('iptables-nft');
      expect(exec.commandLines()).not.toContain('iptables-legacy-save -t mangle');
    });

    it("picks legacy when kubelet's chains are there, even if the system default is nft", async () => {
      const exec = executor(ALL_TOOLS).on({ command: 'iptables-legacy-save', args: [] }, { stdout: KUBELET_MANGLE });
      const caps = await detectHost(new FakeHostFs(), exec, undefined, { env: {} });
      expect(caps.iptablesVariant).toBe('legacy');
      expect(caps.iptablesVariantReason).toContain('iptables-legacy');
    });

    it('otherwise picks the backend holding more rules', async () => {
      const exec = executor(ALL_TOOLS)
        .on({ command: 'iptables-legacy-save', args: [] }, { stdout: rules(12) })
        .on({ command: 'iptables-nft-save', args: [] }, { stdout: rules(3) });
      const caps = await detectHost(new FakeHostFs(), exec, undefined, { env: {} });
      expect(caps.iptablesVariant).toBe('legacy');
      expect(caps.iptablesVariantReason).toContain('12 legacy rule(s), 3 nft rule(s)');

      const nftMore = executor(ALL_TOOLS).on({ command: 'ip6tables-nft-save', args: [] }, { stdout: rules(2) });
      expect((await detectHost(new FakeHostFs(), nftMore, undefined, { env: {} })).iptablesVariant).toBe('nft');
    });

    it("falls back to the system default from `iptables --version`, and tolerates missing *-save tools", async () => {
      const exec = new FakeCommandExecutor().on({ command: 'iptables', args: ['--version'] }, { stdout: 'iptables v1.8.7 (legacy)\n' });
      const caps = await detectHost(new FakeHostFs(), exec, undefined, { env: {} });
      expect(caps.iptablesVariant).toBe('legacy');
      expect(caps.iptablesVariantReason).toContain('system default (iptables is legacy)');
    });

    it('has no variant without iptables, and no random-fully before 1.6.2', async () => {
      const none = await detectHost(new FakeHostFs(), executor(['nft']), undefined, { env: {} });
      expect(none.iptablesVariant).toBeUndefined();
      expect(none.iptablesVariantReason).toBe('iptables is not installed');
      expect(none.iptablesRandomFully).toBe(false);

      const old = await detectHost(new FakeHostFs(), executor(['iptables'], { iptables: 'iptables v1.6.1\n' }), undefined, { env: {} });
      expect(old.iptablesVariant).toBe('legacy');
      expect(old.iptablesRandomFully).toBe(false);
      const just = await detectHost(new FakeHostFs(), executor(['iptables'], { iptables: 'iptables v1.6.2\n' }), undefined, { env: {} });
      expect(just.iptablesRandomFully).toBe(true);
    });
  });

  describe('nftables', () => {
    it('needs kernel 5.13 unless the upstream override is set', async () => {
      const fs = new FakeHostFs({}, '5.10.0-28-amd64');
      const caps = await detectHost(fs, executor(ALL_TOOLS), undefined, { env: {} });
      expect(caps.nftables.available).toBe(false);
      expect(caps.nftables.reason).toContain('kernel 5.10.0-28-amd64 is older than 5.13');
      const skipped = await detectHost(fs, executor(ALL_TOOLS), undefined, { env: { KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK: '1' } });
      expect(skipped.nftables.available).toBe(true);
      expect(skipped.nftables.reason).toContain('kernel check skipped');
    });

    it('needs nft >= 1.0.1', async () => {
      const caps = await detectHost(new FakeHostFs({}, '6.1.0'), executor(ALL_TOOLS, { ...VERSIONS, nft: 'nftables v0.9.8 (E.D.S.)\n' }), undefined, {
        env: {},
      });
      expect(caps.nftables).toEqual({ available: false, reason: 'nftables unavailable: nft 0.9.8 is older than 1.0.1' });
    });

    it('needs nft to be installed and able to talk to the kernel', async () => {
      const missing = await detectHost(new FakeHostFs({}, '6.1.0'), executor(['iptables']), undefined, { env: {} });
      expect(missing.nftables.reason).toBe('nftables unavailable: nft is not installed');

      const denied = executor(ALL_TOOLS).on(
        { command: 'nft', args: ['--check', '-f', '-'] },
        { exitCode: 1, stderr: 'Error: Could not process rule: Operation not permitted\n' },
      );
      const caps = await detectHost(new FakeHostFs({}, '6.1.0'), denied, undefined, { env: {} });
      expect(caps.nftables.available).toBe(false);
      expect(caps.nftables.reason).toContain('Operation not permitted');
      const check = denied.calls.find((c) => c.command === 'nft' && c.args[0] === '--check');
      expect(check?.options.input).toContain('add table ip kube-proxy');
    });
  });

  it('reports, rather than throws, when the executor refuses a probe (e.g. a --dry-run guard)', async () => {
    const inner = executor(ALL_TOOLS);
    const guarded = {
      run: (command: string, args: readonly string[], options?: { input?: string }) =>
        args[0] === '--check' ? Promise.reject(new Error(`--dry-run: refusing to run ${command} ${args.join(' ')}`)) : inner.run(command, args, options),
    };
    const caps = await detectHost(new FakeHostFs({}, '6.1.0'), guarded, undefined, { env: {} });
    expect(caps.nftables.available).toBe(false);
    expect(caps.nftables.reason).toContain('--dry-run: refusing to run nft --check -f -');
    expect(caps.tools.nft).toEqual({ present: true, version: '1.0.6' });
  });

  it('logs what it found', async () => {
    const log = new RecordingLogger();
    await detectHost(new FakeHostFs({}, '6.1.0'), executor(ALL_TOOLS), log, { env: {} });
    expect(log.has('verbose', 'Detected host capabilities')).toBe(true);
    expect(log.entries.filter((e) => e.message === 'Probed tool')).toHaveLength(6);
  });
});
