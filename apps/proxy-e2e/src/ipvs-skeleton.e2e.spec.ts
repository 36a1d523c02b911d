/**
 * The iptables skeleton of IPVS mode on the real kernel of this host (issue 11: "the ipset +
 * iptables skeleton also for real in a namespace on this host (set matches change traffic)").
 *
 * In a simulated node (libs/testing/netns), once per iptables variant (nft, legacy; tags kpsn / kpsl):
 * `ipset restore` of renderIpsetRestore for both families, `iptables-restore --noflush --counters`
 * and `ip6tables-restore` of renderIpvsIptables, then upstream's jump rules (IPVS_IPTABLES_JUMPS,
 * `-I`). Then real TCP traffic from the client and a pod, and the echo servers report the source
 * address they saw:
 *  - KUBE-CLUSTER-IP (`dst,dst`, `! -s <cluster CIDR>`): a non-local client to the cluster IP:port is
 *    masqueraded; the same VIP on a port that is not in the set, and a pod source, are not (IPv4 and,
 *    with the KUBE-6- sets and ip6tables, IPv6);
 *  - KUBE-EXTERNAL-IP: masqueraded;
 *  - KUBE-LOAD-BALANCER → KUBE-LOAD-BALANCER: masqueraded, but KUBE-LOAD-BALANCER-LOCAL RETURNs first
 *    (source kept);
 *  - KUBE-LOAD-BALANCER-FW / -SOURCE-CIDR (filter FORWARD → KUBE-PROXY-FIREWALL →
 *    KUBE-SOURCE-RANGES-FIREWALL): a source inside the range passes, one outside is dropped;
 *  - KUBE-IPVS-FILTER (filter INPUT): on a VIP bound on the node, the service port answers, another
 *    listening port is rejected (its REJECT rule counts the connection), the same port on the node's
 *    own IP answers;
 *  - KUBE-NODE-PORT (bitmap:port sets with `-p tcp`): a Local node port hits the -LOCAL RETURN, a
 *    Cluster one the KUBE-MARK-MASQ rule (rule counters, as nothing is forwarded).
 * Not covered here (no IPVS in this kernel: ipvs-vm.e2e.spec.ts runs the VM): the DNAT itself, so
 * hairpin (KUBE-LOOP-BACK matches the endpoint after IPVS picked it), and KUBE-IPVS-OUT-FILTER, whose
 * `-m ipvs` match needs xt_ipvs (the scenario keeps the node inside the LB's source ranges so that
 * rule is not written; its text is unit-tested).
 * Last, with iptables-legacy (not this host's default `iptables`, which is the nft one on Debian): the
 * real `bin/kube-proxy --cleanup` in the node namespace removes the skeleton's chains and jumps from
 * the legacy tables of both families and then destroys the KUBE- ipsets they referenced.
 * ~6–10 s for both variants.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IPVS_IPTABLES_JUMPS, renderIpsetRestore, renderIpvsIptables, type DesiredIpvsState } from '@kube-proxy/backend-ipvs/internal';
import {
  IPTABLES_VARIANTS,
  cleanupStaleRuns,
  createSimulatedNode,
  describeProbe,
  iptablesCommand,
  probe,
  runPrefix,
  startEchoServer,
  type EchoServer,
  type IptablesVariant,
  type ProbeResult,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import {
  ALLOWED_CLIENT_IP,
  EXTERNAL_IP,
  LB_IP,
  LB_LOCAL_IP,
  LB_LOCAL_NODE_PORT,
  LB_NODE_PORT,
  NODE_IP,
  NODE_VIP,
  POD_CLUSTER_CIDR,
  POD_CLUSTER_CIDR6,
  VIP_HOMES,
  WEB_VIP,
  WEB_VIP6,
  scenarioState,
} from './support/ipvs-skeleton-scenario.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { KUBE_PROXY_BIN, runProxyOnce } from './support/proxy.js';

const pre = await e2ePreflight('IPVS iptables skeleton');
const describeNetns = pre.run ? describe : describe.skip;

const TAGS: Record<IptablesVariant, string> = { nft: 'kpsn', legacy: 'kpsl' };
const BRIDGE_IP = '10.244.1.1';
const BRIDGE_IP6 = 'fd00:10:244:1::1';

/** `<pod> <source>` → count, the compact view of who answered and whom it saw. */
function seen(r: ProbeResult): Readonly<Record<string, number>> {
  return r.byPodSource;
}

/** The packet counter of the one rule of `dump` (iptables-save -c) that contains every fragment. */
function ruleCounter(dump: string, ...fragments: string[]): number {
  const lines = dump.split('\n').filter((l) => fragments.every((f) => l.includes(f)));
  if (lines.length !== 1) throw new Error(`expected one rule with ${fragments.join(' … ')}, found ${lines.length}:\n${dump}`);
  const m = /^\[(\d+):\d+\]/.exec(lines[0]!);
  if (m === null) throw new Error(`no counters on ${lines[0]}`);
  return Number(m[1]);
}

describeNetns.each(IPTABLES_VARIANTS)('IPVS iptables skeleton in a netns (iptables-%s)', (variant) => {
  let node: SimulatedNode | undefined;
  let servers: EchoServer[] = [];
  let tmp = '';
  const state4: DesiredIpvsState = scenarioState('IPv4');
  const state6: DesiredIpvsState = scenarioState('IPv6');
  const payload4 = renderIpvsIptables(state4, { family: 'IPv4', masqueradeBit: 14, masqueradeAll: false, localDetector: { kind: 'cidr', cidr: POD_CLUSTER_CIDR }, randomFully: true }).payload;
  const payload6 = renderIpvsIptables(state6, { family: 'IPv6', masqueradeBit: 14, masqueradeAll: false, localDetector: { kind: 'cidr', cidr: POD_CLUSTER_CIDR6 }, randomFully: true }).payload;

  const n = (): SimulatedNode => {
    if (!node) throw new Error('topology was not created (see beforeAll error)');
    return node;
  };
  const save = async (tool: 'iptables-save' | 'ip6tables-save', table: 'nat' | 'filter'): Promise<string> =>
    (await n().exec(n().ns.node, iptablesCommand(variant, tool), ['-c', '-t', table])).stdout;

  beforeAll(async () => {
    if (pre.missingTools.length > 0) throw new Error(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    // The scenario must not need xt_ipvs (absent from this kernel): no KUBE-IPVS-OUT-FILTER rule.
    expect(payload4).not.toContain('-m ipvs');
    tmp = mkdtempSync(join(tmpdir(), `kp-ipvs-skeleton-${variant}-`));
    const tag = TAGS[variant];
    await cleanupStaleRuns(tag);
    node = await createSimulatedNode({
      prefix: runPrefix(tag),
      ipv6: true,
      clientExtraAddresses: [`${ALLOWED_CLIENT_IP}/24`],
      env: variant === 'legacy' ? { XTABLES_LOCKFILE: join(tmp, 'xtables.lock') } : {},
    });
    const nd = n();
    const pods = { pod1: nd.pods[0]!, pod2: nd.pods[1]! };
    // Each VIP on the loopback of the namespace that answers for it; the node routes pod VIPs there.
    for (const { ip, home } of VIP_HOMES) {
      const v6 = ip.includes(':');
      const ns = home === 'node' ? nd.ns.node : pods[home].ns;
      await nd.exec(ns, 'ip', ['addr', 'add', `${ip}/${v6 ? 128 : 32}`, 'dev', 'lo']);
      if (home !== 'node') await nd.exec(nd.ns.node, 'ip', [...(v6 ? ['-6'] : []), 'route', 'add', ip, 'via', v6 ? pods[home].ip6! : pods[home].ip]);
    }
    servers = await Promise.all([
      startEchoServer(nd, pods.pod1.ns, { tcpPorts: [80, 81], maxLifetimeS: 300 }),
      startEchoServer(nd, pods.pod2.ns, { tcpPorts: [80], maxLifetimeS: 300 }),
      startEchoServer(nd, nd.ns.node, { name: 'node', tcpPorts: [80, 8080, LB_LOCAL_NODE_PORT, LB_NODE_PORT], maxLifetimeS: 300 }),
    ]);

    // What the proxier does per sync: sets first (the rules reference them), then one restore per family, then the jumps.
    await nd.exec(nd.ns.node, 'ipset', ['restore'], { input: renderIpsetRestore(state4) + renderIpsetRestore(state6) });
    await nd.exec(nd.ns.node, iptablesCommand(variant, 'iptables-restore'), ['-w', '5', '--noflush', '--counters'], { input: payload4 });
    await nd.exec(nd.ns.node, iptablesCommand(variant, 'ip6tables-restore'), ['-w', '5', '--noflush', '--counters'], { input: payload6 });
    for (const tool of ['iptables', 'ip6tables'] as const) {
      for (const j of IPVS_IPTABLES_JUMPS) await nd.exec(nd.ns.node, iptablesCommand(variant, tool), ['-w', '5', '-t', j.table, j.position, j.from, ...j.args]);
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 30_000);

  it('loads the payload as written: every set-match rule is in the kernel and matches a set ipset holds', async () => {
    const nat = await save('iptables-save', 'nat');
    const filter = await save('iptables-save', 'filter');
    // (iptables-save prints the address match first.)
    expect(nat).toContain('-A KUBE-SERVICES ! -s 10.244.0.0/16 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ');
    expect(nat).toContain('-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
    expect(filter).toContain('-A KUBE-SOURCE-RANGES-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port + source cidr for packet filter purpose" -m set --match-set KUBE-LOAD-BALANCER-SOURCE-CIDR dst,dst,src -j RETURN');
    expect(filter).toContain('-A INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER');
    const sets = (await n().exec(n().ns.node, 'ipset', ['list', '-n'])).stdout.split('\n').filter(Boolean);
    for (const name of [...payload4.matchAll(/--match-set (\S+)/g), ...payload6.matchAll(/--match-set (\S+)/g)].map((m) => m[1]!)) expect(sets).toContain(name);
    expect(await save('ip6tables-save', 'nat')).toContain('-A KUBE-SERVICES ! -s fd00:10:244::/48 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-6-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ');
  });

  it('KUBE-CLUSTER-IP: masquerades a non-local client to the cluster IP:port, not another port of the VIP, not a pod', async () => {
    const nd = n();
    const inSet = await probe(nd, nd.ns.client, { host: WEB_VIP, port: 80, count: 3 });
    const otherPort = await probe(nd, nd.ns.client, { host: WEB_VIP, port: 81, count: 3 });
    const fromPod = await probe(nd, nd.ns.pods[2]!, { host: WEB_VIP, port: 80, count: 3 });
    expect([seen(inSet), seen(otherPort), seen(fromPod)]).toEqual([{ [`pod1 ${BRIDGE_IP}`]: 3 }, { 'pod1 192.168.50.2': 3 }, { 'pod1 10.244.1.13': 3 }]);
  });

  it('KUBE-6-CLUSTER-IP (ip6tables): the same for IPv6', async () => {
    const nd = n();
    const inSet = await probe(nd, nd.ns.client, { host: WEB_VIP6, port: 80, count: 3 });
    const otherPort = await probe(nd, nd.ns.client, { host: WEB_VIP6, port: 81, count: 3 });
    expect([seen(inSet), seen(otherPort)]).toEqual([{ [`pod1 ${BRIDGE_IP6}`]: 3 }, { [`pod1 ${nd.clientIp6!}`]: 3 }]);
  });

  it('KUBE-EXTERNAL-IP: masquerades traffic to an external IP:port', async () => {
    const r = await probe(n(), n().ns.client, { host: EXTERNAL_IP, port: 80, count: 3 });
    expect(seen(r)).toEqual({ [`pod1 ${BRIDGE_IP}`]: 3 });
  });

  it('KUBE-LOAD-BALANCER: masquerades LB traffic, except for Local-policy LB IPs (KUBE-LOAD-BALANCER-LOCAL)', async () => {
    const nd = n();
    const cluster = await probe(nd, nd.ns.client, { host: LB_IP, port: 80, count: 3, bind: ALLOWED_CLIENT_IP });
    const local = await probe(nd, nd.ns.client, { host: LB_LOCAL_IP, port: 80, count: 3 });
    expect([seen(cluster), seen(local)]).toEqual([{ [`pod2 ${BRIDGE_IP}`]: 3 }, { 'pod2 192.168.50.2': 3 }]);
  });

  it('KUBE-LOAD-BALANCER-FW / -SOURCE-CIDR: a source inside loadBalancerSourceRanges passes, one outside is dropped', async () => {
    const nd = n();
    const allowed = await probe(nd, nd.ns.client, { host: LB_IP, port: 80, count: 2, bind: ALLOWED_CLIENT_IP });
    const denied = await probe(nd, nd.ns.client, { host: LB_IP, port: 80, count: 2, timeoutMs: 500 });
    expect([allowed.ok, denied.errors]).toEqual([2, { TIMEOUT: 2 }]);
    expect(ruleCounter(await save('iptables-save', 'filter'), '-A KUBE-SOURCE-RANGES-FIREWALL -j DROP')).toBeGreaterThanOrEqual(2);
  });

  it('KUBE-IPVS-FILTER: a VIP bound on the node answers on its service port and rejects its other listening ports', async () => {
    const nd = n();
    const service = await probe(nd, nd.ns.client, { host: NODE_VIP, port: 80, count: 2 });
    const otherPort = await probe(nd, nd.ns.client, { host: NODE_VIP, port: 8080, count: 2 });
    const nodeIP = await probe(nd, nd.ns.client, { host: NODE_IP, port: 8080, count: 2 });
    expect([service.byPod, otherPort.errors, nodeIP.byPod]).toEqual([{ node: 2 }, { ECONNREFUSED: 2 }, { node: 2 }]);
    // Refused by the REJECT rule, not by a closed port (8080 listens on every address).
    expect(ruleCounter(await save('iptables-save', 'filter'), '-A KUBE-IPVS-FILTER', '--ctstate NEW', 'KUBE-IPVS-IPS', '-j REJECT')).toBe(2);
  });

  it('KUBE-NODE-PORT: a Local node port RETURNs before the all-node-ports set marks a Cluster one for masquerade', async () => {
    const nd = n();
    const localRule = ['-A KUBE-NODE-PORT -p tcp', '--match-set KUBE-NODE-PORT-LOCAL-TCP dst -j RETURN'];
    const markRule = ['-A KUBE-NODE-PORT -p tcp', '--match-set KUBE-NODE-PORT-TCP dst -j KUBE-MARK-MASQ'];
    const before = await save('iptables-save', 'nat');
    const local = await probe(nd, nd.ns.client, { host: NODE_IP, port: LB_LOCAL_NODE_PORT, count: 3 });
    const mid = await save('iptables-save', 'nat');
    const cluster = await probe(nd, nd.ns.client, { host: NODE_IP, port: LB_NODE_PORT, count: 2 });
    const after = await save('iptables-save', 'nat');
    expect([local.ok, cluster.ok, describeProbe(cluster)]).toEqual([3, 2, describeProbe(cluster)]);
    expect([ruleCounter(mid, ...localRule) - ruleCounter(before, ...localRule), ruleCounter(mid, ...markRule) - ruleCounter(before, ...markRule)]).toEqual([3, 0]);
    expect([ruleCounter(after, ...localRule) - ruleCounter(mid, ...localRule), ruleCounter(after, ...markRule) - ruleCounter(mid, ...markRule)]).toEqual([0, 2]);
  });

  // Last: it removes the skeleton the checks above use. Legacy only: the nft skeleton is in the
  // default `iptables` of a Debian host, which the cleanup always read.
  (variant === 'legacy' ? it : it.skip)('--cleanup removes the legacy skeleton\'s chains and jumps (both families), then its KUBE- ipsets', async () => {
    const nd = n();
    const r = await runProxyOnce(nd, ['--cleanup', '-v=2'], { timeoutMs: 60_000 });
    expect({ bin: KUBE_PROXY_BIN, code: r.code, stderr: r.code === 0 ? '' : r.stderr.slice(-4000) }).toEqual({ bin: KUBE_PROXY_BIN, code: 0, stderr: '' });
    for (const tool of ['iptables-save', 'ip6tables-save'] as const) {
      const dump = (await nd.exec(nd.ns.node, iptablesCommand(variant, tool), [])).stdout;
      const left = dump.split('\n').filter((l) => /^:KUBE-|-j KUBE-/.test(l));
      expect({ tool: iptablesCommand(variant, tool), left }).toEqual({ tool: iptablesCommand(variant, tool), left: [] });
    }
    const sets = (await nd.exec(nd.ns.node, 'ipset', ['list', '-n'])).stdout.split('\n').filter((l) => l.startsWith('KUBE-'));
    expect(sets).toEqual([]);
  }, 90_000);
});

if (!pre.run) {
  it('IPVS iptables skeleton e2e skipped (not root or no ip netns)', () => undefined);
}
