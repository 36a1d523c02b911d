/**
 * Real-kernel e2e of the nftables backend: `bin/kube-proxy --proxy-mode=nftables` runs inside the node
 * namespace of a simulated node (libs/testing/netns, docs/datapath-testing.md), programs `table ip kube-proxy`
 * with `nft -f -` from manifest files, and real TCP/UDP traffic checks the datapath: the scenarios of
 * the iptables suite, plus what only this mode has (ServiceCIDR drop, invalid-port reject, a deleted
 * table rebuilt, switching from and to iptables mode, a dry run whose dump is valid nft input).
 *
 * Assertion windows follow docs/datapath-testing.md: 50/50 over 200 tries within 70–130; drops are bounded
 * timeouts; "fast" ECONNREFUSED is < 200 ms per try.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  IPTABLES_VARIANTS,
  cleanupStaleRuns,
  conntrack,
  createSimulatedNode,
  describeProbe,
  iptables,
  iptablesCommand,
  iptablesSave,
  kubeChains,
  probe,
  runPrefix,
  startEchoServer,
  waitFor,
  type EchoServer,
  type ProbeOptions,
  type ProbeResult,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { allOk, fail, onlyPods, onlySources, within } from './support/probe-assertions.js';
import { CheckRunner } from './support/check-runner.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { writeManifest } from './support/manifests.js';
import { dryRunToNftInput, icmpOutCounters, kubeProxyTables, listKubeProxyTable, nft, nftRuleset, serviceCIDR } from './support/nft-tables.js';
import { KUBE_PROXY_BIN, PROXY_MAIN_JS, proxyArgs, runProxyOnce, startProxy, type RunningProxy } from './support/proxy.js';
import { POD_TCP_PORT, POD_UDP_PORT, SVC, writeDnsSlice, writeInitialManifests, writeLateService } from './support/scenario.js';

const pre = await e2ePreflight('nftables datapath');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpnf';
/** The fresh namespaces the dry-run dump is loaded into (nothing else ever ran there). */
const DRY_TAG = 'kpnfd';
/** kubelet's chain: tells the iptables-mode runs of this suite to use iptables-nft. */
const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
/** kubelet-owned chains that upstream's iptables CleanupLeftovers leaves (as in the iptables suite). */
const KUBELET_OWNED = [HINT_CHAIN, 'KUBE-FIREWALL', 'KUBE-KUBELET-CANARY'];
const SYNC_PERIOD_MS = 2000;
/**
 * Slack on top of one sync period for the table rebuild: detection is at the next table check
 * (≤ one sync period after the last sync); the slack covers the settle wait and one cold-start sync.
 */
const SLACK_MS = 6000;
const FIRST_SYNC_TIMEOUT_MS = existsSync(PROXY_MAIN_JS) ? 30_000 : 120_000;
/** An address inside the ServiceCIDR that no Service has; the off-cluster client answers on it. */
const UNALLOCATED_IP = '10.96.0.77';
const REBUILD_LOG = 'The kube-proxy nftables table was deleted; rebuilding it';

describeNetns('nftables datapath through bin/kube-proxy (--proxy-mode=nftables)', () => {
  let node: SimulatedNode | undefined;
  let dryNode: SimulatedNode | undefined;
  let proxy: RunningProxy | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  let manifests = '';
  /** KUBE-* chains the iptables-mode proxy of the setup left before nftables mode started. */
  let iptablesLeft: string[] = [];

  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const pod = (i: number): string => n().ns.pods[i - 1] ?? fail(`no pod${i}`);
  // Probes give up after 5 failed tries: a broken datapath must not cost count × timeout.
  const p = (ns: string, o: ProbeOptions): Promise<ProbeResult> => probe(n(), ns, { stopAfterErrors: 5, ...o });

  async function diagnostics(): Promise<string> {
    const nd = node;
    if (!nd) return '(no topology)';
    const ruleset = await nftRuleset(nd, nd.ns.node);
    const ct = await conntrack(nd, nd.ns.node, ['-L']).then(
      (r) => r.stdout,
      (e: Error) => e.message,
    );
    const logTail = proxy ? proxy.tail(80) : '(proxy not started)';
    return (
      `=== ip netns exec ${nd.ns.node} nft list ruleset\n${ruleset}\n` +
      `=== conntrack -L (node)\n${ct}\n` +
      `=== proxy log (last 80 lines; full log in ${join(dir, 'proxy.log')})\n${logTail}\n`
    );
  }

  const runner = new CheckRunner({ dir: () => dir, diagnostics, proxy: () => proxy });
  const timings = runner.timings;
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);

  /** Every KUBE-* chain in iptables-{nft,legacy}-save and ip6tables-…-save of the node, kubelet's excepted. */
  async function iptablesKubeChains(): Promise<string[]> {
    const nd = n();
    const left: string[] = [];
    for (const v of IPTABLES_VARIANTS) {
      for (const tool of ['iptables-save', 'ip6tables-save'] as const) {
        const dump = (await nd.exec(nd.ns.node, iptablesCommand(v, tool), [])).stdout;
        left.push(...kubeChains(dump, KUBELET_OWNED).map((c) => `${iptablesCommand(v, tool)}:${c}`));
      }
    }
    return left;
  }

  function start(mode: 'iptables' | 'nftables'): RunningProxy {
    return startProxy(n(), proxyArgs({ manifestsDir: manifests, mode }), { logFile: join(dir, `proxy.log`) });
  }

  async function waitForIptablesSync(pr: RunningProxy): Promise<void> {
    await waitFor(
      'the iptables-mode proxy to program its first sync',
      async () => {
        if (pr.exited()) fail(`kube-proxy (iptables) exited with ${pr.exitCode()}:\n${pr.tail(60)}`);
        const nat = await iptablesSave(n(), n().ns.node, 'nft', 'nat');
        return nat.includes(`${SVC.web.ip}/32`) && nat.includes('KUBE-SERVICES') ? true : undefined;
      },
      { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 200 },
    );
  }

  /** Ready = web's ClusterIP is in the service-ips map of table ip kube-proxy. */
  async function waitForNftSync(pr: RunningProxy, what = 'the nftables proxy to program its first sync', timeoutMs = FIRST_SYNC_TIMEOUT_MS): Promise<void> {
    await waitFor(
      what,
      async () => {
        if (pr.exited()) fail(`kube-proxy (nftables) exited with ${pr.exitCode()}:\n${pr.tail(60)}`);
        const table = await listKubeProxyTable(n(), n().ns.node);
        return table.includes(`${SVC.web.ip} . tcp . ${SVC.web.port}`) ? true : undefined;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  beforeAll(() => runner.setup(setup), 150_000);

  async function setup(): Promise<void> {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    const started = Date.now();
    dir = mkdtempSync(join(tmpdir(), 'kp-e2e-nftables-'));
    manifests = join(dir, 'manifests');
    await cleanupStaleRuns(TAG);
    await cleanupStaleRuns(DRY_TAG);
    node = await createSimulatedNode({ prefix: runPrefix(TAG), clientExtraAddresses: [`${SVC.lb.deniedSource}/24`] });
    servers = await Promise.all(
      node.pods.map((pd) => startEchoServer(n(), pd.ns, { tcpPorts: [POD_TCP_PORT], udpPorts: [POD_UDP_PORT], maxLifetimeS: 600 })),
    );
    writeInitialManifests(manifests, node);
    await iptables(node, node.ns.node, 'nft', ['-t', 'mangle', '-N', HINT_CHAIN]);
    timings['setup (netns + echo servers)'] = Date.now() - started;

    // A node that ran iptables mode before: its KUBE-* chains are what the switch must remove.
    const t0 = Date.now();
    const ipt = start('iptables');
    try {
      await waitForIptablesSync(ipt);
    } finally {
      timings['iptables-mode proxy stop'] = JSON.stringify(await ipt.stop());
    }
    iptablesLeft = await iptablesKubeChains();
    timings['iptables-mode proxy start → first sync → stop'] = Date.now() - t0;

    const t1 = Date.now();
    proxy = start('nftables');
    await waitForNftSync(proxy);
    timings['nftables proxy start → first sync'] = Date.now() - t1;
  }

  afterAll(async () => {
    const stop = proxy ? await proxy.stop() : undefined;
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    await dryNode?.destroy();
    console.log(runner.summary('nftables e2e timings (ms)', `\n  proxy stop: ${JSON.stringify(stop)}`));
    if (dir && runner.failures === 0) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('switching from iptables mode removes its KUBE-* chains and programs table ip kube-proxy', () =>
    check('switch-from-iptables', async () => {
      if (!iptablesLeft.some((c) => c.endsWith('nat/KUBE-SERVICES'))) fail(`the iptables-mode run left no nat/KUBE-SERVICES to remove: ${iptablesLeft.join(' ')}`);
      timings['iptables chains before the switch'] = iptablesLeft.length;
      // The leftovers go after nftables mode's first sync (never before: the node keeps serving), so
      // they are waited for, bounded, rather than expected the moment the nft rules are in.
      let left: string[] = [];
      await waitFor('the iptables-mode chains to be removed after the first nftables sync', async () => ((left = await iptablesKubeChains()).length === 0 ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
      }).catch(() => fail(`iptables-mode chains still there after nftables mode started: ${left.join(' ')}`));
      const tables = await kubeProxyTables(n(), n().ns.node);
      if (!tables.includes('ip')) fail(`no table ip kube-proxy: ${tables.join(' ')}`);
      allOk(await p(pod(3), { host: SVC.web.ip, port: SVC.web.port, count: 10 }), 'pod3 → web after the switch');
    }));

  it('ClusterIP from a pod: both endpoints, balanced, pod source kept', () =>
    check('clusterip-from-pod', async () => {
      const r = await p(pod(3), { host: SVC.web.ip, port: SVC.web.port, count: 200 });
      allOk(r, 'pod3 → web');
      within(r, 'pod1', 70, 130);
      within(r, 'pod2', 70, 130);
      onlySources(r, ['10.244.1.13'], 'pod3 → web (no SNAT inside the cluster)');
    }));

  it('ClusterIP from the node (hostNetwork): masqueraded to the bridge IP', () =>
    check('clusterip-from-node', async () => {
      const r = await p(n().ns.node, { host: SVC.web.ip, port: SVC.web.port, count: 50 });
      allOk(r, 'node → web');
      onlyPods(r, ['pod1', 'pod2'], 'node → web');
      onlySources(r, ['10.244.1.1'], 'node → web');
    }));

  it('ClusterIP from an off-cluster client routed via the node: masqueraded', () =>
    check('clusterip-from-client', async () => {
      const r = await p(n().ns.client, { host: SVC.web.ip, port: SVC.web.port, count: 50 });
      allOk(r, 'client → web ClusterIP');
      onlyPods(r, ['pod1', 'pod2'], 'client → web ClusterIP');
      onlySources(r, ['10.244.1.1'], 'client → web ClusterIP');
    }));

  it("NodePort from the client on the node's primary IP", () =>
    check('nodeport-from-client', async () => {
      const r = await p(n().ns.client, { host: n().nodeIp, port: SVC.web.nodePort, count: 100 });
      allOk(r, 'client → node:30080');
      if (!r.byPod['pod1'] || !r.byPod['pod2']) fail(`NodePort did not spread: ${describeProbe(r)}`);
      onlyPods(r, ['pod1', 'pod2'], 'client → node:30080');
      onlySources(r, ['10.244.1.1'], 'client → node:30080');
    }));

  it('no localhost NodePorts: 127.0.0.1:<nodePort> inside the node namespace is not served', () =>
    check('nodeport-not-localhost', async () => {
      const r = await p(n().ns.node, { host: '127.0.0.1', port: SVC.web.nodePort, count: 5, timeoutMs: 500, stopAfterErrors: 0 });
      if (r.ok !== 0) fail(`127.0.0.1:${SVC.web.nodePort} was served: ${describeProbe(r)}`);
      // Nothing listens there: the node's own stack refuses (or, were it DNATed without route_localnet, drops).
      const other = Object.keys(r.errors).filter((e) => e !== 'ECONNREFUSED' && e !== 'TIMEOUT');
      if (other.length > 0) fail(`unexpected errors: ${describeProbe(r)}`);
      timings['127.0.0.1 NodePort outcome'] = JSON.stringify(r.errors);
      const table = await listKubeProxyTable(n(), n().ns.node);
      if (!table.includes(n().nodeIp)) fail(`nodeport-ips does not hold the primary IP ${n().nodeIp}:\n${table}`);
    }));

  it('hairpin: a pod reaching itself through its service is masqueraded', () =>
    check('hairpin', async () => {
      const r = await p(pod(1), { host: SVC.web.ip, port: SVC.web.port, count: 100 });
      allOk(r, 'pod1 → web');
      const bad = Object.keys(r.byPodSource).filter((k) => k !== 'pod1 10.244.1.1' && k !== 'pod2 10.244.1.11');
      if (bad.length > 0) fail(`hairpin sources wrong (${bad.join(', ')}): ${describeProbe(r)}`);
      if (!r.byPodSource['pod1 10.244.1.1']) fail(`no self-hit at all in 100 tries: ${describeProbe(r)}`);
    }));

  it('balanced distribution across three endpoints', () =>
    check('balance-3', async () => {
      const r = await p(pod(3), { host: SVC.spread.ip, port: SVC.spread.port, count: 300 });
      allOk(r, 'pod3 → spread');
      // 60..140 of 300, as the iptables suite: a skewed pick (150/75/75) still fails it.
      for (const pd of ['pod1', 'pod2', 'pod3']) within(r, pd, 60, 140);
    }));

  it('ClientIP session affinity sticks per client', () =>
    check('affinity', async () => {
      const picks: string[] = [];
      for (const [ns, what] of [
        [pod(3), 'pod3'],
        [pod(1), 'pod1'],
        [n().ns.node, 'node'],
        [n().ns.client, 'client'],
      ] as const) {
        const r = await p(ns, { host: SVC.webAff.ip, port: SVC.webAff.port, count: 50 });
        allOk(r, `${what} → web-aff`);
        const pods = Object.keys(r.byPod);
        if (pods.length !== 1) fail(`${what} → web-aff did not stick: ${describeProbe(r)}`);
        picks.push(`${what}→${pods[0]}`);
      }
      timings['affinity picks'] = picks.join(' ');
    }));

  it('UDP ClusterIP: new flows spread over both endpoints', () =>
    check('udp-clusterip', async () => {
      const r = await p(pod(3), { proto: 'udp', host: SVC.dns.ip, port: SVC.dns.port, count: 100, timeoutMs: 500 });
      allOk(r, 'pod3 → dns (UDP)');
      within(r, 'pod1', 25, 75);
      within(r, 'pod2', 25, 75);
    }));

  it('externalTrafficPolicy=Local: NodePort goes to local endpoints only and keeps the client IP', () =>
    check('etp-local', async () => {
      const r = await p(n().ns.client, { host: n().nodeIp, port: SVC.local.nodePort, count: 50 });
      allOk(r, 'client → node:30082 (eTP Local)');
      onlyPods(r, ['pod1'], 'client → node:30082 (only pod1 is on node-1)');
      onlySources(r, [n().clientIp], 'client → node:30082 (source must be preserved)');
      const c = await p(pod(3), { host: SVC.local.ip, port: SVC.local.port, count: 60 });
      allOk(c, 'pod3 → local ClusterIP');
      if (!c.byPod['pod1'] || !c.byPod['pod2']) fail(`ClusterIP of an eTP=Local service must use all endpoints: ${describeProbe(c)}`);
    }));

  it('externalTrafficPolicy=Local without local endpoints: external traffic is dropped', () =>
    check('etp-local-none', async () => {
      const r = await p(n().ns.client, { host: n().nodeIp, port: SVC.localNone.nodePort, count: 4, timeoutMs: 600, concurrency: 4 });
      if (r.errors['TIMEOUT'] !== 4) fail(`want 4 timeouts (dropped): ${describeProbe(r)}`);
      const c = await p(pod(1), { host: SVC.localNone.ip, port: SVC.localNone.port, count: 20 });
      allOk(c, 'pod1 → local-none ClusterIP (remote endpoints still serve in-cluster traffic)');
      onlyPods(c, ['pod2', 'pod3'], 'pod1 → local-none ClusterIP');
    }));

  it('LoadBalancer IP honours loadBalancerSourceRanges', () =>
    check('loadbalancer', async () => {
      const ok = await p(n().ns.client, { host: SVC.lb.ingress, port: SVC.lb.port, count: 20, bind: SVC.lb.allowedSource });
      allOk(ok, `client ${SVC.lb.allowedSource} → LB ${SVC.lb.ingress}`);
      onlyPods(ok, ['pod1', 'pod2'], 'allowed source → LB');
      const denied = await p(n().ns.client, { host: SVC.lb.ingress, port: SVC.lb.port, count: 4, bind: SVC.lb.deniedSource, timeoutMs: 600, concurrency: 4 });
      if (denied.ok !== 0 || denied.errors['TIMEOUT'] !== 4) fail(`source outside the ranges must be dropped: ${describeProbe(denied)}`);
    }));

  it('externalIPs are served', () =>
    check('external-ip', async () => {
      const r = await p(n().ns.client, { host: SVC.ext.externalIP, port: SVC.ext.port, count: 20 });
      allOk(r, `client → externalIP ${SVC.ext.externalIP}`);
      onlyPods(r, ['pod3'], 'client → externalIP');
    }));

  it('a service without endpoints rejects fast (ECONNREFUSED), ClusterIP and NodePort', () =>
    check('no-endpoints', async () => {
      const a = await p(pod(3), { host: SVC.noep.ip, port: SVC.noep.port, count: 5 });
      if (a.errors['ECONNREFUSED'] !== 5) fail(`pod3 → noep: ${describeProbe(a)}`);
      if ((a.timing.maxTryMs ?? 0) > 200) fail(`rejections too slow: ${describeProbe(a)}`);
      const b = await p(n().ns.client, { host: n().nodeIp, port: SVC.noep.nodePort, count: 5 });
      if (b.errors['ECONNREFUSED'] !== 5) fail(`client → node:30099: ${describeProbe(b)}`);
      if ((b.timing.maxTryMs ?? 0) > 200) fail(`rejections too slow: ${describeProbe(b)}`);
    }));

  it('a valid ClusterIP on a port the service does not define is rejected fast', () =>
    check('clusterip-bad-port', async () => {
      // Without the cluster-ips check this would route out of the node (towards the client) and time out.
      // From pod2: the rejects are ICMP, rate-limited per destination host (burst 6, then 1/s), and
      // pod3 has just had its share from the no-endpoints check (OutRateLimitHost counted the misses).
      const r = await p(pod(2), { host: SVC.web.ip, port: SVC.web.port + 1, count: 5 });
      const icmp = await icmpOutCounters(n(), n().ns.node);
      if (r.errors['ECONNREFUSED'] !== 5) fail(`pod2 → ${SVC.web.ip}:${SVC.web.port + 1}: ${describeProbe(r)}; node ICMP out: ${JSON.stringify(icmp)}`);
      if ((r.timing.maxTryMs ?? 0) > 200) fail(`rejections too slow: ${describeProbe(r)}`);
      const u = await p(pod(1), { proto: 'udp', host: SVC.dns.ip, port: SVC.dns.port + 1, count: 3, timeoutMs: 500 });
      if (u.errors['ECONNREFUSED'] !== 3) fail(`UDP to an undefined port must be rejected (ICMP port unreachable): ${describeProbe(u)}`);
    }));

  it('traffic to an unallocated ClusterIP inside a ServiceCIDR is dropped', () =>
    check('servicecidr-drop', async () => {
      const nd = n();
      // The off-cluster client holds the unallocated address: without the drop the pod reaches it.
      await nd.exec(nd.ns.client, 'ip', ['addr', 'add', `${UNALLOCATED_IP}/32`, 'dev', 'lo']);
      const outside = await startEchoServer(nd, nd.ns.client, { name: 'offcluster', tcpPorts: [POD_TCP_PORT], maxLifetimeS: 300 });
      servers.push(outside);
      const target = { host: UNALLOCATED_IP, port: POD_TCP_PORT };
      const before = await p(pod(3), { ...target, count: 3, timeoutMs: 500 });
      allOk(before, `pod3 → ${UNALLOCATED_IP} before any ServiceCIDR (precondition: the address is reachable)`);
      onlyPods(before, ['offcluster'], `pod3 → ${UNALLOCATED_IP}`);

      const t0 = Date.now();
      writeManifest(manifests, 'servicecidr-kubernetes.yaml', serviceCIDR('kubernetes', [nd.serviceCidr]));
      let last: ProbeResult | undefined;
      await waitFor(
        'traffic to the unallocated ClusterIP to be dropped',
        async () => {
          last = await p(pod(3), { ...target, count: 1, timeoutMs: 300, stopAfterErrors: 0 });
          return last.ok === 0 ? last : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      ).catch(async (e: Error) => {
        const log = (proxy?.logs() ?? '').split('\n').filter((l) => /servicecidr/i.test(l)).slice(-10).join('\n');
        fail(`${e.message}; last: ${last ? describeProbe(last) : '-'}\nproxy log lines about ServiceCIDR:\n${log || '(none)'}`);
      });
      timings['servicecidr drop latency'] = Date.now() - t0;
      const r = await p(pod(3), { ...target, count: 4, timeoutMs: 600, concurrency: 4, stopAfterErrors: 0 });
      if (r.errors['TIMEOUT'] !== 4) fail(`want 4 timeouts (dropped, not rejected): ${describeProbe(r)}`);
      const chain = await nft(nd, nd.ns.node, ['list', 'chain', 'ip', 'kube-proxy', 'cluster-ips-check']);
      if (!chain.stdout.includes(`${nd.serviceCidr}`) || !chain.stdout.includes('drop')) fail(`cluster-ips-check has no drop for ${nd.serviceCidr}:\n${chain.stdout}`);
      // Allocated ClusterIPs in the range are untouched.
      allOk(await p(pod(3), { host: SVC.web.ip, port: SVC.web.port, count: 10 }), 'pod3 → web with the ServiceCIDR');
    }));

  it('picks up a new manifest without a restart', () =>
    check('manifest-add', async () => {
      const pid = proxy?.child.pid;
      const before = await p(pod(3), { host: SVC.late.ip, port: SVC.late.port, count: 1, timeoutMs: 300 });
      if (before.ok !== 0) fail(`late service answered before it existed: ${describeProbe(before)}`);
      const t0 = Date.now();
      writeLateService(manifests, n());
      let last: ProbeResult | undefined;
      await waitFor(
        'the late service to answer',
        async () => {
          last = await p(pod(3), { host: SVC.late.ip, port: SVC.late.port, count: 1, timeoutMs: 300 });
          return last.ok === 1 ? last : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      ).catch((e: Error) => fail(`${e.message} (manifest ${join(manifests, 'svc-late.yaml')}); last: ${last ? describeProbe(last) : '-'}`));
      timings['manifest-add latency'] = Date.now() - t0;
      const r = await p(pod(3), { host: SVC.late.ip, port: SVC.late.port, count: 10 });
      allOk(r, 'pod3 → late');
      onlyPods(r, ['pod3'], 'pod3 → late');
      if (proxy?.exited() || proxy?.child.pid !== pid) fail('the proxy restarted');
    }));

  it('UDP endpoint removal clears the stale conntrack flow (same source port moves)', () =>
    check('udp-stale', async () => {
      const SPORT = 40_000;
      const flow = { proto: 'udp' as const, host: SVC.dns.ip, port: SVC.dns.port, sport: SPORT, timeoutMs: 500 };
      const first = await p(pod(3), { ...flow, count: 3 });
      allOk(first, 'fixed-sport flow');
      const pods = Object.keys(first.byPod);
      if (pods.length !== 1) fail(`one conntrack flow must stay on one endpoint: ${describeProbe(first)}`);
      const removed = pods[0]!;
      const remaining = removed === 'pod1' ? 'pod2' : 'pod1';
      const t0 = Date.now();
      writeDnsSlice(manifests, n(), [remaining === 'pod1' ? 1 : 2]);
      let staleAnswers = 0;
      let polls = 0;
      let last: ProbeResult | undefined;
      await waitFor(
        `the flow to move from ${removed} to ${remaining}`,
        async () => {
          last = await p(pod(3), { ...flow, count: 1 });
          polls++;
          if (last.byPod[removed]) staleAnswers++;
          return last.byPod[remaining] ? last : undefined;
        },
        { timeoutMs: 4 * SYNC_PERIOD_MS + 4000, intervalMs: 250 },
      ).catch((e: Error) =>
        fail(
          `${e.message}: ${staleAnswers} of ${polls} polls were still answered by the removed ${removed} ` +
            `(stale conntrack entry not deleted?); last: ${last ? describeProbe(last) : '-'}`,
        ),
      );
      timings['udp-stale move latency'] = `${Date.now() - t0} ms (${staleAnswers} stale answers meanwhile)`;
      const after = await p(pod(3), { ...flow, count: 3 });
      allOk(after, 'fixed-sport flow after the move');
      onlyPods(after, [remaining], 'fixed-sport flow after the move');
      const ct = await conntrack(n(), n().ns.node, ['-L', '-p', 'udp', '--orig-dst', SVC.dns.ip]);
      const removedIp = removed === 'pod1' ? '10.244.1.11' : '10.244.1.12';
      if (ct.stdout.includes(`src=${removedIp} `)) fail(`conntrack still holds a flow to ${removedIp}:\n${ct.stdout}`);
    }));

  it(`\`nft delete table ip kube-proxy\` is noticed and the table rebuilt within one sync period (${SYNC_PERIOD_MS} ms + ${SLACK_MS} ms slack)`, () =>
    check('table-delete-recovery', async () => {
      const nd = n();
      const logLines = (): string[] => (proxy?.logs() ?? '').split('\n');
      const rebuildsBefore = logLines().filter((l) => l.includes(REBUILD_LOG)).length;
      const del = await nft(nd, nd.ns.node, ['delete', 'table', 'ip', 'kube-proxy']);
      if (del.code !== 0) fail(`nft delete table failed (${del.code}): ${del.stderr}`);
      const t0 = Date.now();
      if ((await kubeProxyTables(nd, nd.ns.node)).includes('ip')) fail('table ip kube-proxy still exists after the delete');
      await waitFor(
        'the ClusterIP to work again after the table was deleted',
        async () => {
          const r = await p(pod(3), { host: SVC.web.ip, port: SVC.web.port, count: 1, timeoutMs: 200, stopAfterErrors: 1 });
          return r.ok === 1 ? r : undefined;
        },
        { timeoutMs: 3 * SYNC_PERIOD_MS + 8000, intervalMs: 250 },
      );
      const took = Date.now() - t0;
      timings['table rebuild latency'] = took;
      if (took > SYNC_PERIOD_MS + SLACK_MS) fail(`table came back after ${took} ms, want <= ${SYNC_PERIOD_MS} ms + ${SLACK_MS} ms slack`);
      const rebuilds = logLines().filter((l) => l.includes(REBUILD_LOG)).length - rebuildsBefore;
      if (rebuilds !== 1) fail(`want exactly one "${REBUILD_LOG}" log line, got ${rebuilds}`);
      // All of it, not just one service: NodePort, reject, source ranges, the ServiceCIDR drop.
      allOk(await p(n().ns.client, { host: n().nodeIp, port: SVC.web.nodePort, count: 10 }), 'client → NodePort after the rebuild');
      const noEp = await p(pod(3), { host: SVC.noep.ip, port: SVC.noep.port, count: 3 });
      if (noEp.errors['ECONNREFUSED'] !== 3) fail(`no-endpoint reject not restored: ${describeProbe(noEp)}`);
      const denied = await p(n().ns.client, { host: SVC.lb.ingress, port: SVC.lb.port, count: 2, bind: SVC.lb.deniedSource, timeoutMs: 500, concurrency: 2 });
      if (denied.ok !== 0) fail(`LoadBalancer source ranges not restored: ${describeProbe(denied)}`);
      const unalloc = await p(pod(3), { host: UNALLOCATED_IP, port: POD_TCP_PORT, count: 2, timeoutMs: 500, concurrency: 2, stopAfterErrors: 0 });
      if (unalloc.ok !== 0) fail(`ServiceCIDR drop not restored: ${describeProbe(unalloc)}`);
      allOk(await p(pod(3), { host: SVC.late.ip, port: SVC.late.port, count: 5 }), 'pod3 → late after the rebuild');
    }));

  it('switching back to iptables mode removes the kube-proxy nft tables and serves traffic', () =>
    check('switch-to-iptables', async () => {
      const nd = n();
      timings['nftables proxy exit on SIGTERM'] = JSON.stringify(await proxy!.stop());
      if (!(await kubeProxyTables(nd, nd.ns.node)).includes('ip')) fail('SIGTERM removed table ip kube-proxy (rules must stay in place)');
      const t0 = Date.now();
      proxy = start('iptables');
      await waitForIptablesSync(proxy);
      timings['iptables-mode proxy start → first sync (after nftables)'] = Date.now() - t0;
      // Removed after iptables mode's first sync: waited for, bounded.
      let tables = await kubeProxyTables(nd, nd.ns.node);
      await waitFor('the kube-proxy nft tables to be removed after the first iptables sync', async () => ((tables = await kubeProxyTables(nd, nd.ns.node)).length === 0 ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
      }).catch(() => undefined);
      if (tables.length > 0) fail(`kube-proxy nft tables still there in iptables mode: ${tables.join(' ')}\n${await nftRuleset(nd, nd.ns.node)}`);
      const r = await p(pod(3), { host: SVC.web.ip, port: SVC.web.port, count: 20 });
      allOk(r, 'pod3 → web in iptables mode');
      onlyPods(r, ['pod1', 'pod2'], 'pod3 → web in iptables mode');
    }));

  it('--cleanup deletes both kube-proxy tables (ip and ip6) and exits 0', () =>
    check('cleanup', async () => {
      const nd = n();
      timings['iptables-mode proxy exit on SIGTERM'] = JSON.stringify(await proxy!.stop());
      // No long-running proxy from here on (the runner would report the stopped one as crashed).
      proxy = undefined;
      const once = await runProxyOnce(nd, proxyArgs({ manifestsDir: manifests, mode: 'nftables', extra: ['--once'] }));
      if (once.code !== 0) fail(`--proxy-mode=nftables --once exited ${once.code}:\n${once.stderr.slice(-4000)}`);
      // A single-stack node programs only the ip table; an ip6 one (a dual-stack past) must go too.
      if (!(await kubeProxyTables(nd, nd.ns.node)).includes('ip6')) {
        const add = await nft(nd, nd.ns.node, ['add', 'table', 'ip6', 'kube-proxy']);
        if (add.code !== 0) fail(`nft add table ip6 kube-proxy failed: ${add.stderr}`);
      }
      const before = await kubeProxyTables(nd, nd.ns.node);
      if (before.join(' ') !== 'ip ip6') fail(`want both tables before --cleanup, have: ${before.join(' ')}`);
      const r = await runProxyOnce(nd, ['--cleanup', '-v=2']);
      if (r.code !== 0) fail(`${KUBE_PROXY_BIN} --cleanup exited ${r.code}:\n${r.stderr.slice(-4000)}`);
      const after = await kubeProxyTables(nd, nd.ns.node);
      if (after.length > 0) fail(`--cleanup left table(s) ${after.join(' ')}:\n${await nftRuleset(nd, nd.ns.node)}`);
      const left = await iptablesKubeChains();
      if (left.length > 0) fail(`--cleanup left iptables chains ${left.join(' ')}`);
      const t = await p(pod(3), { host: SVC.web.ip, port: SVC.web.port, count: 2, timeoutMs: 300, concurrency: 2 });
      if (t.ok !== 0) fail(`the ClusterIP still answers after --cleanup: ${describeProbe(t)}`);
    }));

  it('--dry-run --once needs no nft, and its dump (without `# sync` lines) loads with `nft -f` into a fresh namespace', () =>
    check('dry-run-dump', async () => {
      dryNode = await createSimulatedNode({ prefix: runPrefix(DRY_TAG), podCount: 1 });
      const ns = dryNode.ns.node;
      if ((await nft(dryNode, ns, ['list', 'ruleset'])).stdout.trim() !== '') fail(`${ns} is not fresh`);
      // PATH without /usr/sbin: no nft (nor iptables, conntrack) for the proxy to find.
      const path = '/usr/local/bin:/usr/bin';
      for (const dirOnPath of path.split(':')) if (existsSync(join(dirOnPath, 'nft'))) fail(`nft found in ${dirOnPath}: the PATH does not hide it`);
      const args = ['--proxy-mode=nftables', `--manifests=${manifests}`, '--hostname-override=node-1', '--cluster-cidr=10.244.0.0/16', '--dry-run', '--once'];
      const r = await dryNode.exec(ns, 'env', [`PATH=${path}`, KUBE_PROXY_BIN, ...args], { allowFailure: true, timeoutMs: 60_000 });
      if (r.code !== 0) fail(`dry run exited ${r.code}:\n${r.stderr.slice(-4000)}`);
      if (!r.stdout.includes('# sync')) fail(`no "# sync" header in the dry-run output:\n${r.stdout.slice(0, 2000)}`);
      const input = dryRunToNftInput(r.stdout);
      timings['dry-run dump'] = `${input.length} bytes, ${input.split('\n').length} lines`;
      const load = await nft(dryNode, ns, ['-f', '-'], input);
      if (load.code !== 0) fail(`nft -f of the dry-run dump failed (${load.code}): ${load.stderr}\n--- input (first 4000 chars)\n${input.slice(0, 4000)}`);
      const table = await listKubeProxyTable(dryNode, ns);
      for (const want of [`${SVC.web.ip} . tcp . ${SVC.web.port}`, `${SVC.late.ip} . tcp . ${SVC.late.port}`, `tcp . ${SVC.web.nodePort}`]) {
        if (!table.includes(want)) fail(`loaded table lacks ${want}:\n${table}`);
      }
    }));
});

if (!pre.run) {
  it('nftables datapath e2e skipped (not root or no ip netns)', () => undefined);
}
