import {
  COMMAND_EXECUTOR,
  FakeCommandExecutor,
  fakeContainer,
  LOGGER,
  RecordingLogger,
  type HostCapabilities,
  type PluginContainer,
  type ProxyContext,
} from '@kube-proxy/core';
import { IPVS_CHAINS, IPVS_JUMPS, cleanupIpvs } from './cleanup.js';
import { ipvsBackend } from './plugin.js';

/** A container with what the CLI registers for --cleanup. */
function containerWith(exec: FakeCommandExecutor, logger = new RecordingLogger()): PluginContainer {
  return fakeContainer([
    [COMMAND_EXECUTOR, exec],
    [LOGGER, logger],
  ]).container;
}

function host(present: { iptables?: boolean; ip6tables?: boolean; ipset?: boolean; ipvsadm?: boolean } = {}): HostCapabilities {
  const tool = (p = false) => ({ present: p });
  return {
    kernelRelease: '6.1.0',
    ipvs: { available: true, reason: 'test' },
    nftables: { available: false, reason: 'n/a' },
    tools: {
      iptables: tool(present.iptables),
      ip6tables: tool(present.ip6tables),
      ipset: tool(present.ipset),
      ipvsadm: tool(present.ipvsadm),
      nft: tool(),
      conntrack: tool(),
    },
    iptablesVariantReason: 'n/a',
    iptablesRandomFully: false,
  };
}

const NO_RULE = { exitCode: 1, stderr: 'iptables: Bad rule (does a matching rule exist in that chain?).\n' };
const NO_CHAIN = { exitCode: 1, stderr: 'iptables: No chain/target/match by that name.\n' };

/** A clean node: nothing of ours exists. */
function cleanNode(): FakeCommandExecutor {
  return new FakeCommandExecutor()
    .on({ command: 'ipvsadm', args: ['-C'] }, {})
    .on({ command: 'ip' }, { exitCode: 1, stderr: 'Cannot find device "kube-ipvs0"\n' })
    .on((c) => c.command === 'iptables' && c.args.includes('-D'), NO_RULE)
    .on((c) => c.command === 'iptables' && !c.args.includes('-D'), NO_CHAIN)
    .on({ command: 'ipset', args: ['list', '-n'] }, { stdout: '' });
}

describe('ipvs cleanup', () => {
  it('runs upstream CleanupLeftovers commands in order and succeeds on a clean node', async () => {
    const exec = cleanNode();
    const logger = new RecordingLogger();
    expect(await cleanupIpvs(exec, host({ iptables: true, ipset: true, ipvsadm: true }), logger)).toBe(false);
    const ipt = (args: string) => `iptables -w 5 ${args}`;
    expect(exec.commandLines()).toEqual([
      'ipvsadm -C',
      'ip link del kube-ipvs0',
      ipt('-t nat -D OUTPUT -m comment --comment kubernetes service portals -j KUBE-SERVICES'),
      ipt('-t nat -D PREROUTING -m comment --comment kubernetes service portals -j KUBE-SERVICES'),
      ipt('-t nat -D POSTROUTING -m comment --comment kubernetes postrouting rules -j KUBE-POSTROUTING'),
      ipt('-t filter -D FORWARD -m comment --comment kubernetes forwarding rules -j KUBE-FORWARD'),
      ipt('-t filter -D INPUT -m comment --comment kubernetes health check rules -j KUBE-NODE-PORT'),
      ipt('-t filter -D INPUT -m comment --comment kube-proxy firewall rules -j KUBE-PROXY-FIREWALL'),
      ipt('-t filter -D FORWARD -m comment --comment kube-proxy firewall rules -j KUBE-PROXY-FIREWALL'),
      ipt('-t filter -D INPUT -m comment --comment kubernetes ipvs access filter -j KUBE-IPVS-FILTER'),
      ipt('-t filter -D OUTPUT -m comment --comment kubernetes ipvs access filter -j KUBE-IPVS-OUT-FILTER'),
      ...IPVS_CHAINS.map((c) => ipt(`-t ${c.table} -F ${c.chain}`)),
      ...IPVS_CHAINS.map((c) => ipt(`-t ${c.table} -X ${c.chain}`)),
      'ipset list -n',
    ]);
    expect(IPVS_CHAINS.map((c) => `${c.table}/${c.chain}`)).toEqual(
      expect.arrayContaining(['nat/KUBE-LOAD-BALANCER', 'nat/KUBE-NODE-PORT', 'nat/KUBE-MARK-MASQ', 'filter/KUBE-IPVS-FILTER']),
    );
    // The comment is one argument.
    expect(exec.calls[2]!.args).toEqual(['-w', '5', '-t', 'nat', '-D', 'OUTPUT', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']);
    expect(logger.entries.filter((r) => r.level === 'error')).toEqual([]);
  });

  it('treats a kernel without IPVS as nothing to clear (ipvsadm present), as upstream, but a real ipvsadm failure as an error', async () => {
    const noIpvs = cleanNode().on(
      { command: 'ipvsadm', args: ['-C'] },
      { exitCode: 2, stderr: "modprobe: FATAL: Module ip_vs not found\nCan't initialize ipvs: Protocol not available\n" },
    );
    expect(await cleanupIpvs(noIpvs, host({ iptables: true, ipset: true, ipvsadm: true }), new RecordingLogger())).toBe(false);
    const broken = cleanNode().on({ command: 'ipvsadm', args: ['-C'] }, { exitCode: 2, stderr: 'Memory allocation problem\n' });
    expect(await cleanupIpvs(broken, host({ iptables: true, ipset: true, ipvsadm: true }), new RecordingLogger())).toBe(true);
  });

  it('skips the tools the host does not have (no ipvsadm, ipset or iptables)', async () => {
    const exec = cleanNode();
    expect(await cleanupIpvs(exec, host(), new RecordingLogger())).toBe(false);
    expect(exec.commandLines()).toEqual(['ip link del kube-ipvs0']);
    // Even `ip` missing is no error.
    const none = new FakeCommandExecutor();
    expect(await cleanupIpvs(none, host(), new RecordingLogger())).toBe(false);
  });

  it('removes duplicate jumps and cleans ip6tables too, destroying only KUBE- ipsets, tolerating in-use ones', async () => {
    let copies = 2;
    const exec = cleanNode()
      .on({ command: 'ip' }, {})
      .on((c) => c.command === 'ip6tables', {})
      .on((c) => c.command === 'ip6tables' && c.args.includes('-D'), NO_RULE)
      .on({ command: 'iptables', args: ['-w', '5', '-t', IPVS_JUMPS[0]!.table, '-D', 'OUTPUT', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'] }, () =>
        copies-- > 0 ? {} : NO_RULE,
      )
      .on({ command: 'ipset', args: ['list', '-n'] }, { stdout: 'KUBE-CLUSTER-IP\ncali40all-hosts\nKUBE-LOOP-BACK\n' })
      .on({ command: 'ipset', args: ['destroy', 'KUBE-CLUSTER-IP'] }, {})
      .on({ command: 'ipset', args: ['destroy', 'KUBE-LOOP-BACK'] }, {
        exitCode: 1,
        stderr: 'ipset v7.15: Set cannot be destroyed: it is in use by a kernel component\n',
      });
    const logger = new RecordingLogger();
    expect(await cleanupIpvs(exec, host({ iptables: true, ip6tables: true, ipset: true }), logger)).toBe(false);
    const lines = exec.commandLines();
    expect(lines.filter((l) => l.startsWith('iptables -w 5 -t nat -D OUTPUT'))).toHaveLength(3);
    expect(lines.filter((l) => l.startsWith('ip6tables -w 5 -t nat -X KUBE-SERVICES'))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('ipset destroy'))).toEqual(['ipset destroy KUBE-CLUSTER-IP', 'ipset destroy KUBE-LOOP-BACK']);
    expect(logger.entries.filter((r) => r.level === 'warn').map((r) => r.message)).toEqual(['ipset is still in use; leaving it']);
  });

  it('reports real failures (a chain still referenced) after trying everything', async () => {
    const exec = cleanNode().on({ command: 'iptables', args: ['-w', '5', '-t', 'nat', '-X', 'KUBE-SERVICES'] }, {
      exitCode: 1,
      stderr: 'iptables v1.8.7 (legacy): CHAIN_USER_DEL failed (Device or resource busy): chain KUBE-SERVICES\n',
    });
    const logger = new RecordingLogger();
    expect(await cleanupIpvs(exec, host({ iptables: true, ipset: true }), logger)).toBe(true);
    expect(exec.commandLines().at(-1)).toBe('ipset list -n');
    expect(logger.entries.filter((r) => r.level === 'error')).toHaveLength(1);
  });
});

describe('ipvs plugin cleanup()', () => {
  function ctx(dryRun: boolean, h: HostCapabilities): ProxyContext {
    return { config: {} as never, nodeName: 'n', nodeIPs: {}, families: ['IPv4', 'IPv6'], dryRun, dryRunSink: { write: () => undefined }, host: h };
  }

  it('resolves its ports from the container and exits cleanly on a clean node', async () => {
    const exec = cleanNode();
    const scope = containerWith(exec);
    await expect(ipvsBackend.cleanup!(scope, ctx(false, host({ iptables: true, ipset: true, ipvsadm: true })))).resolves.toBeUndefined();
    expect(exec.calls.length).toBeGreaterThan(20);
  });

  it('throws when an error was encountered, and does nothing in --dry-run', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 2, stderr: 'boom' });
    const scope = containerWith(exec);
    await expect(ipvsBackend.cleanup!(scope, ctx(false, host({ ipvsadm: true })))).rejects.toThrow(/ipvs backend/);
    exec.calls.length = 0;
    await ipvsBackend.cleanup!(scope, ctx(true, host({ ipvsadm: true })));
    expect(exec.calls).toEqual([]);
  });
});
