/**
 * Self-test of the netns harness (libs/testing/netns) with hand-written rules, no proxy involved: if this
 * suite fails, the iptables-datapath suite's failures are not evidence against the proxy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  IPTABLES_VARIANTS,
  cleanupStaleRuns,
  createSimulatedNode,
  describeProbe,
  iptablesRestore,
  iptablesSave,
  probe,
  run,
  runPrefix,
  startEchoServer,
  type EchoServer,
  type IptablesVariant,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { HAND_RULES } from './support/hand-rules.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';

const pre = await e2ePreflight('netns harness');
const describeNetns = pre.run ? describe : describe.skip;

const TAGS: Record<IptablesVariant, string> = { nft: 'kphn', legacy: 'kphl' };

describeNetns.each(IPTABLES_VARIANTS)('netns harness self-test (iptables-%s)', (variant) => {
  let node: SimulatedNode | undefined;
  let servers: EchoServer[] = [];
  let tmp = '';

  const n = (): SimulatedNode => {
    if (!node) throw new Error('topology was not created (see beforeAll error)');
    return node;
  };

  beforeAll(async () => {
    if (pre.missingTools.length > 0) throw new Error(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    tmp = mkdtempSync(join(tmpdir(), `kp-harness-${variant}-`));
    const tag = TAGS[variant];
    await cleanupStaleRuns(tag);
    node = await createSimulatedNode({
      prefix: runPrefix(tag),
      ipv6: true,
      clientExtraAddresses: ['192.168.50.3/24'],
      env: variant === 'legacy' ? { XTABLES_LOCKFILE: join(tmp, 'xtables.lock') } : {},
    });
    servers = await Promise.all(node.pods.map((p) => startEchoServer(n(), p.ns, { tcpPorts: [8080], udpPorts: [5353], maxLifetimeS: 300 })));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 30_000);

  it('builds the topology inside its own namespaces only', async () => {
    const nd = n();
    for (const name of [nd.bridge, nd.uplink, ...nd.pods.map((p) => p.hostVeth)]) expect(name.length).toBeLessThanOrEqual(15);
    // Nothing of ours in the root namespace.
    const rootLinks = await run('ip', ['-o', 'link', 'show'], { timeoutMs: 10_000 });
    expect(rootLinks.stdout).not.toContain(nd.prefix);
    expect(await nd.sysctl(nd.ns.node, 'net.ipv4.ip_forward')).toBe('1');
    expect(await nd.sysctl(nd.ns.node, 'net.bridge.bridge-nf-call-iptables')).toBe('1');
    expect(await nd.sysctl(nd.ns.client, 'net.ipv4.ip_forward')).toBe('0');
    const links = JSON.parse((await nd.exec(nd.ns.node, 'ip', ['-d', '-j', 'link', 'show', 'master', nd.bridge])).stdout) as Array<{
      ifname: string;
      linkinfo?: { info_slave_data?: { hairpin?: boolean } };
    }>;
    expect(links.map((l) => [l.ifname, l.linkinfo?.info_slave_data?.hairpin])).toEqual(nd.pods.map((p) => [p.hostVeth, true]));
  });

  it('routes the client to pods through the node (IPv4 and IPv6), sources preserved', async () => {
    const nd = n();
    const r4 = await probe(nd, nd.ns.client, { host: '10.244.1.11', port: 8080, count: 5 });
    expect(r4.byPod).toEqual({ pod1: 5 });
    expect(r4.sources).toEqual({ '192.168.50.2': 5 });
    const r3 = await probe(nd, nd.ns.client, { host: '10.244.1.11', port: 8080, count: 3, bind: '192.168.50.3' });
    expect(r3.sources).toEqual({ '192.168.50.3': 3 });
    const r6 = await probe(nd, nd.ns.client, { host: nd.pods[1]!.ip6!, port: 8080, count: 5 });
    expect(r6.byPod).toEqual({ pod2: 5 });
    expect(r6.sources).toEqual({ [nd.clientIp6!]: 5 });
    const u = await probe(nd, nd.ns.pods[2]!, { proto: 'udp', host: '10.244.1.12', port: 5353, count: 5 });
    expect(u.byPod).toEqual({ pod2: 5 });
  });

  it('classifies failures: ECONNREFUSED fast, TIMEOUT bounded, UDP port unreachable', async () => {
    const nd = n();
    const refused = await probe(nd, nd.ns.pods[2]!, { host: '10.244.1.11', port: 9, count: 3 });
    expect(refused.errors).toEqual({ ECONNREFUSED: 3 });
    expect(refused.timing.maxTryMs).toBeLessThan(200);
    // 203.0.113.99 has no rule: the node routes it back into the client, which does not forward.
    const dropped = await probe(nd, nd.ns.client, { host: '203.0.113.99', port: 80, count: 4, timeoutMs: 300, concurrency: 4 });
    expect(dropped.errors).toEqual({ TIMEOUT: 4 });
    expect(dropped.timing.totalMs).toBeLessThan(2000);
    const udpRefused = await probe(nd, nd.ns.pods[2]!, { proto: 'udp', host: '10.244.1.11', port: 9, count: 2, timeoutMs: 500 });
    expect(udpRefused.errors).toEqual({ ECONNREFUSED: 2 });
  });

  it('loads hand-written rules and serves one ClusterIP (balanced, masquerade, hairpin, reject)', async () => {
    const nd = n();
    await iptablesRestore(nd, nd.ns.node, variant, HAND_RULES);
    expect(await iptablesSave(nd, nd.ns.node, variant, 'nat')).toContain('KUBE-SVC-HARNESSWEB');

    const fromPod = await probe(nd, nd.ns.pods[2]!, { host: '10.96.0.10', port: 80, count: 200 });
    expect({ ok: fromPod.ok, sources: fromPod.sources }).toEqual({ ok: 200, sources: { '10.244.1.13': 200 } });
    for (const pod of ['pod1', 'pod2']) {
      expect([pod, fromPod.byPod[pod]! >= 70 && fromPod.byPod[pod]! <= 130, describeProbe(fromPod)]).toEqual([pod, true, describeProbe(fromPod)]);
    }

    const fromNode = await probe(nd, nd.ns.node, { host: '10.96.0.10', port: 80, count: 20 });
    expect({ ok: fromNode.ok, sources: fromNode.sources }).toEqual({ ok: 20, sources: { '10.244.1.1': 20 } });

    const hairpin = await probe(nd, nd.ns.pods[0]!, { host: '10.96.0.10', port: 80, count: 40 });
    expect(hairpin.ok).toBe(40);
    for (const key of Object.keys(hairpin.byPodSource)) expect(['pod1 10.244.1.1', 'pod2 10.244.1.11']).toContain(key);

    const noEp = await probe(nd, nd.ns.pods[2]!, { host: '10.96.0.99', port: 80, count: 3 });
    expect(noEp.errors).toEqual({ ECONNREFUSED: 3 });
  });

  it('keeps one UDP flow on one conntrack entry with a fixed source port', async () => {
    const nd = n();
    const a = await probe(nd, nd.ns.pods[2]!, { proto: 'udp', host: '10.244.1.11', port: 5353, count: 3, sport: 40123 });
    const b = await probe(nd, nd.ns.pods[2]!, { proto: 'udp', host: '10.244.1.11', port: 5353, count: 3, sport: 40123 });
    expect([a.ok, b.ok]).toEqual([3, 3]);
    expect(a.tries.every((t) => t.source === '10.244.1.13')).toBe(true);
  });
});

if (!pre.run) {
  it('netns harness self-test skipped (not root or no ip netns)', () => undefined);
}
