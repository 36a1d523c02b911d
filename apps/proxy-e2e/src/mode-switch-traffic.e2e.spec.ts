/**
 * Switching proxy modes under traffic (issue 20): a node namespace with ~1,000 ClusterIP Services runs
 * the real proxy in iptables mode (iptables-legacy, as the issue's node), then — while probes open new
 * connections back to back to several existing Services from a pod, from the node itself and from the
 * client via a NodePort — the proxy is stopped (SIGTERM leaves its rules) and started in nftables mode,
 * which removes the iptables leftovers only after its own first sync; then the same back (nftables →
 * iptables). The kernel is the judge: no probe may fail, and a sampler of the node's rules records
 * that at no moment were both modes' Service rules absent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cleanupStaleRuns,
  createSimulatedNode,
  iptables,
  iptablesSave,
  kubeChains,
  runPrefix,
  startEchoServer,
  waitFor,
  type EchoServer,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { CheckRunner } from './support/check-runner.js';
import { failedBatches, startContinuousTraffic, type StreamResult, type TrafficTarget } from './support/continuous-traffic.js';
import { endpointSlice, service, writeManifest } from './support/manifests.js';
import { kubeProxyTables, listKubeProxyTable, nft, nftRuleset } from './support/nft-tables.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { fail } from './support/probe-assertions.js';
import { proxyArgs, startProxy, type RunningProxy } from './support/proxy.js';
import { POD_TCP_PORT, POD_UDP_PORT, SVC, eps, writeInitialManifests } from './support/scenario.js';

const pre = await e2ePreflight('mode switch under traffic');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpms';
const VARIANT = 'legacy' as const;
const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
const KUBELET_OWNED = [HINT_CHAIN, 'KUBE-FIREWALL', 'KUBE-KUBELET-CANARY'];
/** Extra ClusterIP Services (besides the scenario's), all served by pod1 and pod2. */
const BULK_SERVICES = 1000;
const bulkIp = (i: number): string => `10.96.${10 + (i >> 8)}.${i & 255}`;
/** A start until rules are in (1k services, a loaded 2-core machine, cold Node start). */
const SYNC_TIMEOUT_MS = 90_000;
/** After the new mode's first sync: its removal of the old mode's leftovers. */
const LEFTOVERS_TIMEOUT_MS = 60_000;

describeNetns('switching proxy modes under traffic (iptables-legacy ↔ nftables, ~1,000 Services)', () => {
  let node: SimulatedNode | undefined;
  let proxy: RunningProxy | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  let manifests = '';
  const env: Record<string, string> = {};

  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const pod = (i: number): string => n().ns.pods[i - 1] ?? fail(`no pod${i}`);

  async function diagnostics(): Promise<string> {
    const nd = node;
    if (!nd) return '(no topology)';
    const save = await iptablesSave(nd, nd.ns.node, VARIANT, 'nat').catch((e: Error) => e.message);
    const ruleset = await nftRuleset(nd, nd.ns.node).catch((e: Error) => e.message);
    return (
      `=== iptables-${VARIANT}-save -t nat (first 120 lines)\n${save.split('\n').slice(0, 120).join('\n')}\n` +
      `=== nft list ruleset (first 120 lines)\n${ruleset.split('\n').slice(0, 120).join('\n')}\n` +
      `=== proxy log (last 60 lines; full log in ${join(dir, 'proxy.log')})\n${proxy ? proxy.tail(60) : '(no proxy)'}\n`
    );
  }

  const runner = new CheckRunner({ dir: () => dir, diagnostics, proxy: () => proxy });
  const timings = runner.timings;

  function start(mode: 'iptables' | 'nftables'): RunningProxy {
    return startProxy(n(), proxyArgs({ manifestsDir: manifests, mode, syncPeriod: '30s', minSyncPeriod: '1s' }), { env, logFile: join(dir, 'proxy.log') });
  }

  /** What the node's kernel holds right now: the iptables-mode Service rules, the nftables-mode ones. */
  async function rulesNow(): Promise<{ iptables: boolean; nftables: boolean; kubeChains: number; nftTables: number }> {
    const nd = n();
    const nat = await iptablesSave(nd, nd.ns.node, VARIANT, 'nat');
    const chains = kubeChains(nat, KUBELET_OWNED).length;
    const iptablesServes = /^-A PREROUTING .*-j KUBE-SERVICES$/m.test(nat) && nat.includes(`-d ${bulkIp(BULK_SERVICES - 1)}/32`);
    const table = await listKubeProxyTable(nd, nd.ns.node).catch(() => '');
    const nftablesServes = table.includes(`${bulkIp(BULK_SERVICES - 1)} . tcp . 80`) && table.includes(`${SVC.web.ip} . tcp . ${SVC.web.port}`);
    const nftTables = (await kubeProxyTables(nd, nd.ns.node)).length;
    return { iptables: iptablesServes, nftables: nftablesServes, kubeChains: chains, nftTables };
  }

  async function waitUntil(what: string, pr: RunningProxy, done: (r: Awaited<ReturnType<typeof rulesNow>>) => boolean, timeoutMs: number): Promise<void> {
    await waitFor(
      what,
      async () => {
        if (pr.exited()) fail(`kube-proxy exited with ${pr.exitCode()}:\n${pr.tail(60)}`);
        return done(await rulesNow()) ? true : undefined;
      },
      { timeoutMs, intervalMs: 250 },
    );
  }

  /**
   * The sampler's cheaper look (no full dump): iptables mode serves when PREROUTING jumps to
   * KUBE-SERVICES and that chain holds the last bulk Service; nftables mode when its service-ips map
   * holds it. Each look is two short commands, so the sampler sees the node every ~100–300 ms.
   */
  async function servingNow(): Promise<{ iptables: boolean; nftables: boolean }> {
    const nd = n();
    const last = bulkIp(BULK_SERVICES - 1);
    const [pre, svc, map] = await Promise.all([
      iptables(nd, nd.ns.node, VARIANT, ['-t', 'nat', '-S', 'PREROUTING']).then((r) => r.stdout, () => ''),
      iptables(nd, nd.ns.node, VARIANT, ['-t', 'nat', '-S', 'KUBE-SERVICES']).then((r) => r.stdout, () => ''),
      nft(nd, nd.ns.node, ['list', 'map', 'ip', 'kube-proxy', 'service-ips']).then((r) => (r.code === 0 ? r.stdout : ''), () => ''),
    ]);
    return { iptables: /-j KUBE-SERVICES$/m.test(pre) && svc.includes(`-d ${last}/32`), nftables: map.includes(`${last} . tcp . 80`) };
  }

  /** Samples the node's rules until stopped (bounded): the moments neither mode's rules were there. */
  function startSampler(): { stop: () => Promise<{ samples: number; bare: number[] }> } {
    let running = true;
    const t0 = Date.now();
    const bare: number[] = [];
    let samples = 0;
    const loop = (async () => {
      while (running && samples < 2000 && Date.now() - t0 < 240_000) {
        const r = await servingNow();
        samples++;
        if (!r.iptables && !r.nftables) bare.push(Date.now() - t0);
      }
    })();
    return {
      stop: async () => {
        running = false;
        await loop;
        return { samples, bare };
      },
    };
  }

  function targets(): TrafficTarget[] {
    const nd = n();
    return [
      { what: 'pod3 → web ClusterIP', ns: pod(3), host: SVC.web.ip, port: SVC.web.port },
      { what: 'pod3 → bulk-0', ns: pod(3), host: bulkIp(0), port: 80 },
      { what: `pod3 → bulk-${BULK_SERVICES - 1}`, ns: pod(3), host: bulkIp(BULK_SERVICES - 1), port: 80 },
      { what: 'node → bulk-500', ns: nd.ns.node, host: bulkIp(500), port: 80 },
      { what: 'client → web NodePort', ns: nd.ns.client, host: nd.nodeIp, port: SVC.web.nodePort },
    ];
  }

  /**
   * Stops the running proxy (SIGTERM: its rules stay), starts `to`, waits for its rules and for the
   * old mode's leftovers to be gone, all under continuous traffic and the sampler.
   */
  async function switchUnderTraffic(to: 'iptables' | 'nftables', oldGone: (r: Awaited<ReturnType<typeof rulesNow>>) => boolean): Promise<void> {
    const traffic = startContinuousTraffic(n(), targets(), { batch: 25, intervalMs: 20, timeoutMs: 1000, maxBatches: 400, maxMs: 180_000 });
    const sampler = startSampler();
    let results: StreamResult[] = [];
    let bare: number[] = [];
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const tStop = Date.now();
      timings[`${to}: old proxy exit on SIGTERM`] = JSON.stringify(await proxy!.stop());
      const tStart = Date.now();
      proxy = start(to);
      const newRules = (r: Awaited<ReturnType<typeof rulesNow>>) => (to === 'nftables' ? r.nftables : r.iptables);
      await waitUntil(`the ${to} proxy's rules`, proxy, newRules, SYNC_TIMEOUT_MS);
      const tSynced = Date.now();
      await waitUntil(`the leftovers of the old mode to go (after ${to}'s first sync)`, proxy, oldGone, LEFTOVERS_TIMEOUT_MS);
      const tClean = Date.now();
      await new Promise((r) => setTimeout(r, 1500));
      results = await traffic.stop();
      const s = await sampler.stop();
      bare = s.bare;
      timings[`${to}: switch`] =
        `old stopped +${tStop - traffic.startedAt} ms, new started +${tStart - traffic.startedAt}, its rules in +${tSynced - traffic.startedAt}, ` +
        `old leftovers gone +${tClean - traffic.startedAt}; ${s.samples} rule samples`;
      timings[`${to}: traffic`] = results.map((r) => `${r.requests} ${r.what}`).join(', ');
    } finally {
      await traffic.stop().catch(() => undefined);
      await sampler.stop().catch(() => undefined);
    }
    const failed = failedBatches(results);
    if (failed.length > 0) fail(`requests failed during the switch to ${to}:\n${failed.join('\n')}`);
    if (results.some((r) => r.requests === 0)) fail(`a stream made no requests: ${JSON.stringify(results.map((r) => [r.what, r.requests]))}`);
    if (bare.length > 0) fail(`the node had neither mode's Service rules at +${bare.join(', +')} ms`);
  }

  beforeAll(() => runner.setup(setup), 200_000);

  async function setup(): Promise<void> {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    const started = Date.now();
    dir = mkdtempSync(join(tmpdir(), 'kp-e2e-modeswitch-'));
    manifests = join(dir, 'manifests');
    env['XTABLES_LOCKFILE'] = join(dir, 'xtables.lock');
    await cleanupStaleRuns(TAG);
    node = await createSimulatedNode({ prefix: runPrefix(TAG), env });
    servers = await Promise.all(node.pods.map((pd) => startEchoServer(n(), pd.ns, { tcpPorts: [POD_TCP_PORT], udpPorts: [POD_UDP_PORT], maxLifetimeS: 600 })));
    writeInitialManifests(manifests, node);
    const items: Record<string, unknown>[] = [];
    for (let i = 0; i < BULK_SERVICES; i++) {
      const name = `bulk-${i}`;
      items.push(service({ name, clusterIP: bulkIp(i), ports: [{ name: 'http', port: 80, targetPort: POD_TCP_PORT }] }));
      items.push(endpointSlice({ service: name, ports: [{ name: 'http', port: POD_TCP_PORT }], endpoints: eps(node, [1, 2]) }));
    }
    writeManifest(manifests, 'bulk.yaml', { apiVersion: 'v1', kind: 'List', items });
    // kubelet's hint chain: the iptables-mode proxy uses iptables-legacy.
    await iptables(node, node.ns.node, VARIANT, ['-t', 'mangle', '-N', HINT_CHAIN]);
    timings['setup (netns + echo servers + manifests)'] = Date.now() - started;
    const t0 = Date.now();
    proxy = start('iptables');
    await waitUntil('the iptables-mode proxy to program ~1,000 Services', proxy, (r) => r.iptables, SYNC_TIMEOUT_MS);
    timings['iptables proxy start → rules'] = Date.now() - t0;
  }

  afterAll(async () => {
    const stop = proxy ? await proxy.stop() : undefined;
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    console.log(runner.summary('mode switch e2e timings (ms)', `\n  proxy stop: ${JSON.stringify(stop)}`));
    if (dir && runner.failures === 0) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('iptables → nftables under traffic: no failed request, never without rules, iptables KUBE-* chains gone after', () =>
    runner.check('iptables-to-nftables', async () => {
      const before = await rulesNow();
      if (before.kubeChains < 2 * BULK_SERVICES) fail(`the iptables-mode node has only ${before.kubeChains} KUBE-* chains`);
      timings['iptables KUBE-* chains before the switch'] = before.kubeChains;
      await switchUnderTraffic('nftables', (r) => !r.iptables && r.kubeChains === 0);
      const left = kubeChains(await iptablesSave(n(), n().ns.node, VARIANT), KUBELET_OWNED);
      if (left.length > 0) fail(`iptables-mode chains left after the switch: ${left.slice(0, 10).join(' ')}`);
      if (!(await kubeProxyTables(n(), n().ns.node)).includes('ip')) fail('no table ip kube-proxy');
    }));

  it('nftables → iptables under traffic: no failed request, never without rules, the kube-proxy nft table gone after', () =>
    runner.check('nftables-to-iptables', async () => {
      await switchUnderTraffic('iptables', (r) => r.nftTables === 0);
      const r = await rulesNow();
      if (!r.iptables) fail('iptables-mode rules missing after the switch back');
      const tables = await kubeProxyTables(n(), n().ns.node);
      if (tables.length > 0) fail(`kube-proxy nft tables still there: ${tables.join(' ')}\n${await nftRuleset(n(), n().ns.node)}`);
    }));
});
