/**
 * Real-kernel e2e of the nftables layout of upstream v1.36/v1.37 (issue 23 item 1), on a dual-stack
 * simulated node (libs/testing/netns) with src/fixtures/nftables-layout/ as manifests:
 * - a restart over a table in the older (v1.33–v1.35) layout, loaded with `nft -f` from the dump the
 *   proxy wrote before the change (fixtures/nftables-layout/v1.35-layout.nft): `kube-proxy --once`
 *   converts it while new TCP connections run to four services all along, and none fails; it exits
 *   and --once exits only after the old chains are deleted (a second after the takeover, as a running
 *   proxy deletes them);
 * - the table it leaves, read back from the kernel: plain `dnat to` for single-endpoint services
 *   (IPv4 and IPv6), one `numgen random mod N map` rule for several, endpoint chains only for
 *   ClientIP affinity, one hairpin-connections element per local endpoint in use (none for a remote
 *   one), no mark-for-masquerade chain;
 * - real traffic over it: spread, hairpin (IPv4 and IPv6, masqueraded through hairpin-connections),
 *   off-cluster sources masqueraded (ClusterIP and NodePort), affinity, sources kept inside the cluster;
 * - other programs' tables with odd content (a set of ifnames, a `table inet kube-proxy`, comments
 *   naming kube-proxy) neither confuse the proxy nor are touched by it (kubernetes #136786).
 * ~30–60 s.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanupStaleRuns, createSimulatedNode, describeProbe, probe, runPrefix, startEchoServer, type EchoServer, type ProbeOptions, type ProbeResult, type SimulatedNode } from '@kube-proxy/testing-netns';
import { allOk, fail, onlyPods, onlySources, within } from './support/probe-assertions.js';
import { CheckRunner } from './support/check-runner.js';
import { failedBatches, startContinuousTraffic } from './support/continuous-traffic.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { listKubeProxyTable, nft, nftRuleset, type NftFamily } from './support/nft-tables.js';
import { proxyArgs, runProxyOnce } from './support/proxy.js';

const pre = await e2ePreflight('nftables layout');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpnl';
const FIXTURES = fileURLToPath(new URL('./fixtures/nftables-layout', import.meta.url));
const OLD_LAYOUT = readFileSync(join(FIXTURES, 'v1.35-layout.nft'), 'utf8');
const POD_TCP_PORT = 8080;
const CLUSTER_CIDRS = '10.244.0.0/16,fd00:10:244::/48';
const SVC = {
  multi: { ip: '10.96.0.10', nodePort: 30080 },
  single: { ip: '10.96.0.11' },
  sticky: { ip: '10.96.0.12' },
  multi6: { ip: 'fd00:10:96::10' },
  single6: { ip: 'fd00:10:96::11' },
} as const;
const BRIDGE = { IPv4: '10.244.1.1', IPv6: 'fd00:10:244:1::1' } as const;

/** Other programs' tables: odd types, comments naming kube-proxy, a kube-proxy table of another family. */
const FOREIGN_TABLES = [
  `add table ip zz-foreign { comment "not kube-proxy's table" ; }`,
  'add set ip zz-foreign ifnames { type ifname ; comment "kube-proxy cluster-ips" ; }',
  'add element ip zz-foreign ifnames { "test", "lo" }',
  'add set ip zz-foreign cluster-ips { type ipv4_addr . inet_service ; flags interval ; }',
  'add element ip zz-foreign cluster-ips { 10.96.0.0/16 . 80-90 }',
  'add chain ip zz-foreign services { comment "kube-proxy ünïcødé {} ; #" ; }',
  'add rule ip zz-foreign services iifname @ifnames counter comment "table ip kube-proxy"',
  'add table inet kube-proxy',
  'add set inet kube-proxy cluster-ips { type ipv4_addr ; elements = { 10.96.0.99 } ; }',
  'add table ip6 kube-proxy-canary',
].join('\n');
const FOREIGN = [
  ['ip', 'zz-foreign'],
  ['inet', 'kube-proxy'],
  ['ip6', 'kube-proxy-canary'],
] as const;

/** `elements` of one set of table <family> kube-proxy, each concatenation joined by " . ". */
async function setElements(node: SimulatedNode, family: NftFamily, set: string): Promise<string[]> {
  const r = await nft(node, node.ns.node, ['-j', 'list', 'set', family, 'kube-proxy', set]);
  if (r.code !== 0) fail(`nft -j list set ${family} kube-proxy ${set} failed: ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as { nftables: Array<{ set?: { elem?: unknown[] } }> };
  const elems = doc.nftables.find((o) => o.set)?.set?.elem ?? [];
  return elems.map((e) => ((e as { concat?: unknown[] }).concat ?? [e]).map(String).join(' . ')).sort();
}

describeNetns('nftables v1.37 layout on the kernel (bin/kube-proxy --proxy-mode=nftables, dual-stack)', () => {
  let node: SimulatedNode | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  const foreignBefore = new Map<string, string>();

  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const pod = (i: number): string => n().ns.pods[i - 1] ?? fail(`no pod${i}`);
  const p = (ns: string, o: ProbeOptions): Promise<ProbeResult> => probe(n(), ns, { stopAfterErrors: 5, ...o });
  const table = (family: NftFamily): Promise<string> => listKubeProxyTable(n(), n().ns.node, family);

  async function diagnostics(): Promise<string> {
    return node ? `=== nft list ruleset (node)\n${await nftRuleset(node, node.ns.node)}` : '(no topology)';
  }
  const runner = new CheckRunner({ dir: () => dir, diagnostics, proxy: () => undefined });
  const timings = runner.timings;
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);

  async function foreignListing(family: string, name: string): Promise<string> {
    const r = await nft(n(), n().ns.node, ['list', 'table', family, name]);
    return r.code === 0 ? r.stdout : `(absent: ${r.stderr.trim()})`;
  }

  beforeAll(
    () =>
      runner.setup(async () => {
        if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
        const started = Date.now();
        dir = mkdtempSync(join(tmpdir(), 'kp-e2e-nftlayout-'));
        await cleanupStaleRuns(TAG);
        node = await createSimulatedNode({ prefix: runPrefix(TAG), ipv6: true, podCount: 3 });
        servers = await Promise.all(node.pods.map((pd) => startEchoServer(n(), pd.ns, { tcpPorts: [POD_TCP_PORT], maxLifetimeS: 300 })));
        const load = await nft(node, node.ns.node, ['-f', '-'], FOREIGN_TABLES);
        if (load.code !== 0) fail(`loading the foreign tables failed: ${load.stderr}`);
        for (const [family, name] of FOREIGN) foreignBefore.set(`${family} ${name}`, await foreignListing(family, name));
        timings['setup (netns + echo servers + foreign tables)'] = Date.now() - started;
      }),
    120_000,
  );

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    console.log(runner.summary('nftables layout e2e timings (ms)', ''));
    if (dir && runner.failures === 0) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('a restart over the v1.35 layout converts the table while new connections to existing services never fail', () =>
    check('restart-over-old-layout', async () => {
      const nd = n();
      const load = await nft(nd, nd.ns.node, ['-f', '-'], OLD_LAYOUT);
      if (load.code !== 0) fail(`nft -f of the v1.35-layout fixture failed: ${load.stderr}`);
      if (!(await table('ip')).includes('chain mark-for-masquerade')) fail('the fixture is not the old layout (no mark-for-masquerade)');
      allOk(await p(pod(3), { host: SVC.multi.ip, port: 80, count: 6 }), 'pod3 → multi over the old table');

      const traffic = startContinuousTraffic(
        nd,
        [
          { what: 'pod3 → multi', ns: pod(3), host: SVC.multi.ip, port: 80 },
          { what: 'pod3 → single', ns: pod(3), host: SVC.single.ip, port: 80 },
          { what: 'pod3 → single6', ns: pod(3), host: SVC.single6.ip, port: 80 },
          { what: 'client → NodePort', ns: nd.ns.client, host: nd.nodeIp, port: SVC.multi.nodePort },
        ],
        { batch: 20, intervalMs: 20, timeoutMs: 1000, maxBatches: 200, maxMs: 90_000 },
      );
      // Let every stream run over the old table first.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const t0 = Date.now();
      const once = await runProxyOnce(nd, proxyArgs({ manifestsDir: FIXTURES, mode: 'nftables', clusterCidr: CLUSTER_CIDRS, extra: ['--once'] }));
      timings['kube-proxy --once over the old table'] = Date.now() - t0;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const results = await traffic.stop();
      if (once.code !== 0) fail(`kube-proxy --once exited ${once.code}:\n${once.stderr.slice(-4000)}`);
      if (!/Taking over the kube-proxy nftables table/.test(once.stderr + once.stdout)) fail(`the proxy did not take the old table over:\n${once.stderr.slice(-3000)}`);
      const failed = failedBatches(results);
      timings['requests during the restart'] = results.map((s) => `${s.what}: ${s.requests - s.failed}/${s.requests}`).join('; ');
      if (failed.length > 0) fail(`connections failed during the restart:\n${failed.join('\n')}`);
      for (const s of results) if (s.runs.length < 3) fail(`${s.what} ran only ${s.runs.length} batches: the restart was not covered`);
      // --once waits for the stale-chain deletion a running proxy does a second after the takeover,
      // so it exits with the new layout only: no old chain is left, flushed or not.
      const leftovers = (t: string) => [...t.matchAll(/chain ((?:endpoint-[A-Z0-9]+-default\/(?!sticky\/)\S+)|mark-for-masquerade) \{/g)];
      for (const family of ['ip', 'ip6'] as const) {
        const t = await table(family);
        if (!t.includes('set hairpin-connections')) fail(`table ${family} kube-proxy has no hairpin-connections set:\n${t}`);
        const left = leftovers(t).map((m) => m[1]);
        if (left.length > 0) fail(`old chains left after --once (${family}): ${left.join(' ')}`);
      }
    }));

  it('the kernel holds the v1.37 layout: plain dnat for one endpoint, a numgen map for several, endpoint chains only with affinity', () =>
    check('kernel-layout', async () => {
      const v4 = await table('ip');
      const v6 = await table('ip6');
      const chainOf = (t: string, svc: string): string => {
        const m = new RegExp(`chain (service-[A-Z0-9]+-default/${svc}/tcp/http) \\{([^}]*)\\}`).exec(t);
        return m ? m[2]! : fail(`no service chain for ${svc}:\n${t}`);
      };
      const single = chainOf(v4, 'single');
      if (!/dnat (ip )?to 10\.244\.1\.11:8080/.test(single) || single.includes('numgen')) fail(`single: want a plain dnat, got:\n${single}`);
      const single6 = chainOf(v6, 'single6');
      if (!/dnat (ip6 )?to \[fd00:10:244:1::12\]:8080/.test(single6) || single6.includes('numgen')) fail(`single6: want a plain dnat, got:\n${single6}`);
      if (!/numgen random mod 3 map \{/.test(chainOf(v4, 'multi'))) fail(`multi: want numgen random mod 3 map:\n${chainOf(v4, 'multi')}`);
      if (!/numgen random mod 2 map \{/.test(chainOf(v6, 'multi6'))) fail(`multi6: want numgen random mod 2 map:\n${chainOf(v6, 'multi6')}`);
      const endpointChains = [...`${v4}\n${v6}`.matchAll(/chain (endpoint-[A-Z0-9]+-\S+) \{/g)].map((m) => m[1]!);
      if (endpointChains.length !== 2 || !endpointChains.every((c) => c.includes('/sticky/'))) fail(`endpoint chains must be sticky's two only: ${endpointChains.join(' ')}`);
      const hp4 = await setElements(n(), 'ip', 'hairpin-connections');
      const want4 = ['10.244.1.11', '10.244.1.12', '10.244.1.13'].map((ip) => `${ip} . ${ip} . tcp . 8080`);
      if (JSON.stringify(hp4) !== JSON.stringify(want4)) fail(`ip hairpin-connections: want ${JSON.stringify(want4)} (local endpoints only, not 10.244.2.21), got ${JSON.stringify(hp4)}`);
      const hp6 = await setElements(n(), 'ip6', 'hairpin-connections');
      const want6 = ['fd00:10:244:1::11', 'fd00:10:244:1::12'].map((ip) => `${ip} . ${ip} . tcp . 8080`);
      if (JSON.stringify(hp6) !== JSON.stringify(want6)) fail(`ip6 hairpin-connections: want ${JSON.stringify(want6)}, got ${JSON.stringify(hp6)}`);
      timings['kernel rules'] = `${v4.split('\n').length} lines (ip), ${v6.split('\n').length} lines (ip6)`;
    }));

  it('traffic: numgen spread, hairpin masqueraded (IPv4 and IPv6), off-cluster sources masqueraded, affinity sticks', () =>
    check('traffic', async () => {
      const nd = n();
      const spread = await p(pod(3), { host: SVC.multi.ip, port: 80, count: 150 });
      allOk(spread, 'pod3 → multi');
      for (const pd of ['pod1', 'pod2', 'pod3']) within(spread, pd, 25, 75);

      const single = await p(pod(3), { host: SVC.single.ip, port: 80, count: 10 });
      allOk(single, 'pod3 → single');
      onlyPods(single, ['pod1'], 'pod3 → single');
      onlySources(single, ['10.244.1.13'], 'pod3 → single (no SNAT inside the cluster)');

      const single6 = await p(pod(3), { host: SVC.single6.ip, port: 80, count: 10 });
      allOk(single6, 'pod3 → single6');
      onlyPods(single6, ['pod2'], 'pod3 → single6');
      onlySources(single6, ['fd00:10:244:1::13'], 'pod3 → single6 (no SNAT inside the cluster)');

      const multi6 = await p(pod(3), { host: SVC.multi6.ip, port: 80, count: 60 });
      allOk(multi6, 'pod3 → multi6');
      within(multi6, 'pod1', 12, 48);
      within(multi6, 'pod2', 12, 48);

      const hairpin = await p(pod(1), { host: SVC.single.ip, port: 80, count: 10 });
      allOk(hairpin, 'pod1 → single (itself)');
      onlySources(hairpin, [BRIDGE.IPv4], 'hairpin pod1 → single (masqueraded via hairpin-connections)');
      const hairpin6 = await p(pod(2), { host: SVC.single6.ip, port: 80, count: 10 });
      allOk(hairpin6, 'pod2 → single6 (itself)');
      onlySources(hairpin6, [BRIDGE.IPv6], 'hairpin pod2 → single6 (masqueraded via hairpin-connections)');
      const mixed = await p(pod(1), { host: SVC.multi.ip, port: 80, count: 60 });
      allOk(mixed, 'pod1 → multi');
      const bad = Object.keys(mixed.byPodSource).filter((k) => !['pod1 10.244.1.1', 'pod2 10.244.1.11', 'pod3 10.244.1.11'].includes(k));
      if (bad.length > 0 || !mixed.byPodSource['pod1 10.244.1.1']) fail(`pod1 → multi: only its own hits are masqueraded (${bad.join(', ')}): ${describeProbe(mixed)}`);

      const client = await p(nd.ns.client, { host: SVC.multi.ip, port: 80, count: 20 });
      allOk(client, 'client → multi ClusterIP');
      onlySources(client, [BRIDGE.IPv4], 'off-cluster client → ClusterIP (masqueraded)');
      const nodePort = await p(nd.ns.client, { host: nd.nodeIp, port: SVC.multi.nodePort, count: 20 });
      allOk(nodePort, 'client → NodePort');
      onlySources(nodePort, [BRIDGE.IPv4], 'external client → NodePort (masqueraded, policy Cluster)');

      for (const [ns, what] of [
        [pod(3), 'pod3'],
        [pod(1), 'pod1'],
        [nd.ns.client, 'client'],
      ] as const) {
        const r = await p(ns, { host: SVC.sticky.ip, port: 80, count: 20 });
        allOk(r, `${what} → sticky`);
        if (Object.keys(r.byPod).length !== 1) fail(`${what} → sticky did not stick: ${describeProbe(r)}`);
      }
    }));

  it("other programs' tables are neither read into our state nor touched", () =>
    check('foreign-tables', async () => {
      for (const [family, name] of FOREIGN) {
        const now = await foreignListing(family, name);
        if (now !== foreignBefore.get(`${family} ${name}`)) fail(`table ${family} ${name} changed:\nbefore:\n${foreignBefore.get(`${family} ${name}`)}\nafter:\n${now}`);
      }
      // A second --once over our own (now current) table next to them: nothing to take over wrongly.
      const again = await runProxyOnce(n(), proxyArgs({ manifestsDir: FIXTURES, mode: 'nftables', clusterCidr: CLUSTER_CIDRS, extra: ['--once'] }));
      if (again.code !== 0) fail(`second --once exited ${again.code}:\n${again.stderr.slice(-3000)}`);
      if (/Rebuilding the kube-proxy nftables table/.test(again.stderr)) fail(`the second --once rebuilt instead of taking over:\n${again.stderr.slice(-3000)}`);
      allOk(await p(pod(3), { host: SVC.single.ip, port: 80, count: 3 }), 'pod3 → single after the second --once');
    }));
});

if (!pre.run) {
  it('nftables layout e2e skipped (not root or no ip netns)', () => undefined);
}
