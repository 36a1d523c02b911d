import { COMMAND_EXECUTOR, FakeCommandExecutor, fakeContainer, LOGGER, RecordingLogger, type HostCapabilities, type ProxyContext } from '@kube-proxy/core';
import { cleanupUserspace } from './cleanup.js';
import { userspaceBackend } from './plugin.js';

function host(iptables: boolean, ip6tables = false): HostCapabilities {
  const tool = (p: boolean) => ({ present: p });
  return {
    kernelRelease: '6.1.0',
    ipvs: { available: false, reason: 'n/a' },
    nftables: { available: false, reason: 'n/a' },
    tools: { iptables: tool(iptables), ip6tables: tool(ip6tables), ipset: tool(false), ipvsadm: tool(false), nft: tool(false), conntrack: tool(false) },
    iptablesVariantReason: 'n/a',
    iptablesRandomFully: false,
  };
}

const NO_RULE = { exitCode: 1, stderr: 'iptables: Bad rule (does a matching rule exist in that chain?).\n' };
const NO_CHAIN_NFT = { exitCode: 1, stderr: "iptables v1.8.9 (nf_tables): Chain 'KUBE-PORTALS-HOST' does not exist\n" };
/** iptables-nft, -D with a jump to a missing chain (seen for real in a netns). */
const NO_TARGET_NFT = { exitCode: 2, stderr: "iptables v1.8.9 (nf_tables): Chain 'KUBE-PORTALS-HOST' does not exist\nTry `iptables -h' for more information.\n" };

function cleanNode(): FakeCommandExecutor {
  return new FakeCommandExecutor()
    .on((c) => c.args.includes('-D'), NO_RULE)
    .on((c) => c.args.includes('-D') && c.args.includes('KUBE-PORTALS-HOST'), NO_TARGET_NFT)
    .on((c) => !c.args.includes('-D'), NO_CHAIN_NFT);
}

const ipt = (args: string) => `iptables -w 5 ${args}`;
const CLEAN_NODE_COMMANDS = [
  ipt('-t nat -D OUTPUT -m comment --comment handle ClusterIPs; NOTE: this must be before the NodePort rules -j KUBE-PORTALS-HOST'),
  ipt('-t nat -D PREROUTING -m comment --comment handle ClusterIPs; NOTE: this must be before the NodePort rules -j KUBE-PORTALS-CONTAINER'),
  ipt('-t nat -D OUTPUT -m addrtype --dst-type LOCAL -m comment --comment handle service NodePorts; NOTE: this must be the last rule in the chain -j KUBE-NODEPORT-HOST'),
  ipt('-t nat -D PREROUTING -m addrtype --dst-type LOCAL -m comment --comment handle service NodePorts; NOTE: this must be the last rule in the chain -j KUBE-NODEPORT-CONTAINER'),
  ipt('-t filter -D INPUT -m comment --comment Ensure that non-local NodePort traffic can flow -j KUBE-NODEPORT-NON-LOCAL'),
  ipt('-t nat -F KUBE-PORTALS-CONTAINER'),
  ipt('-t nat -F KUBE-PORTALS-HOST'),
  ipt('-t nat -F KUBE-NODEPORT-CONTAINER'),
  ipt('-t nat -F KUBE-NODEPORT-HOST'),
  ipt('-t filter -F KUBE-NODEPORT-NON-LOCAL'),
  ipt('-t nat -X KUBE-PORTALS-CONTAINER'),
  ipt('-t nat -X KUBE-PORTALS-HOST'),
  ipt('-t nat -X KUBE-NODEPORT-CONTAINER'),
  ipt('-t nat -X KUBE-NODEPORT-HOST'),
  ipt('-t filter -X KUBE-NODEPORT-NON-LOCAL'),
];

describe('userspace cleanup', () => {
  it('unlinks, flushes and deletes the old userspace chains, tolerating their absence', async () => {
    const exec = cleanNode();
    const logger = new RecordingLogger();
    expect(await cleanupUserspace(exec, host(true), logger)).toBe(false);
    expect(exec.commandLines()).toEqual(CLEAN_NODE_COMMANDS);
    expect(exec.calls[0]!.args).toContain('handle ClusterIPs; NOTE: this must be before the NodePort rules');
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  });

  it('removes leftovers where they exist, in both families', async () => {
    let hostJumps = 1;
    const exec = new FakeCommandExecutor()
      .setDefault({})
      .on((c) => c.args.includes('-D'), NO_RULE)
      .on((c) => c.command === 'iptables' && c.args.includes('-D') && c.args.includes('KUBE-PORTALS-HOST'), () => (hostJumps-- > 0 ? {} : NO_RULE));
    expect(await cleanupUserspace(exec, host(true, true), new RecordingLogger())).toBe(false);
    const lines = exec.commandLines();
    expect(lines.filter((l) => l.includes('-D OUTPUT') && l.endsWith('KUBE-PORTALS-HOST'))).toHaveLength(3); // 2 iptables + 1 ip6tables
    expect(lines.filter((l) => l.startsWith('ip6tables -w 5 -t nat -X '))).toHaveLength(4);
  });

  it('does nothing without iptables, and reports a real error', async () => {
    const none = new FakeCommandExecutor();
    expect(await cleanupUserspace(none, host(false), new RecordingLogger())).toBe(false);
    expect(none.calls).toEqual([]);

    const locked = cleanNode().on((c) => c.args.includes('-F') && c.args.includes('KUBE-PORTALS-HOST'), {
      exitCode: 4,
      stderr: 'Another app is currently holding the xtables lock. Stopped waiting after 5s.\n',
    });
    const logger = new RecordingLogger();
    expect(await cleanupUserspace(locked, host(true), logger)).toBe(true);
    expect(locked.commandLines()).toHaveLength(CLEAN_NODE_COMMANDS.length);
    expect(logger.entries.filter((e) => e.level === 'error')).toHaveLength(1);
  });
});

describe('userspace plugin cleanup()', () => {
  function run(exec: FakeCommandExecutor, dryRun: boolean) {
    const { container } = fakeContainer([
      [COMMAND_EXECUTOR, exec],
      [LOGGER, new RecordingLogger()],
    ]);
    const ctx: ProxyContext = { config: {} as never, nodeName: 'n', nodeIPs: {}, families: ['IPv4'], dryRun, dryRunSink: { write: () => undefined }, host: host(true) };
    return userspaceBackend.cleanup!(container, ctx);
  }

  it('resolves its ports from the container; clean node → success', async () => {
    const exec = cleanNode();
    await expect(run(exec, false)).resolves.toBeUndefined();
    expect(exec.commandLines()).toEqual(CLEAN_NODE_COMMANDS);
  });

  it('throws on errors, and leaves the host alone in --dry-run', async () => {
    await expect(run(new FakeCommandExecutor().setDefault({ exitCode: 3, stderr: 'permission denied' }), false)).rejects.toThrow(/userspace backend/);
    const dry = cleanNode();
    await run(dry, true);
    expect(dry.calls).toEqual([]);
  });
});
