/**
 * Real-kernel e2e of the node agent around the iptables backend: `bin/kube-proxy` runs inside the node
 * namespace of a simulated node (libs/testing/netns) with `--manifests`, iptables-nft.
 *
 * - a SIGTERM + restart keeps ClusterIP and NodePort traffic flowing (rules stay in place, exit 0);
 * - the conntrack sysctls are set per network namespace (the root namespace's values stay as they were);
 * - a Service's health-check node port and /healthz answer from inside the node namespace.
 *
 * Root-only; skipped (loudly) otherwise. Nothing touches the root namespace: the root's conntrack
 * sysctls are only read (before and after) to prove it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cleanupStaleRuns,
  createSimulatedNode,
  iptables,
  iptablesSave,
  runPrefix,
  startEchoServer,
  waitFor,
  type EchoServer,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { failedBatches, startContinuousTraffic, type StreamResult } from './support/continuous-traffic.js';
import { httpGet, type HttpAnswer } from './support/http-get.js';
import { endpointSlice, service, writeManifest } from './support/manifests.js';
import { fail } from './support/probe-assertions.js';
import { CheckRunner } from './support/check-runner.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { PROXY_MAIN_JS, proxyArgs, startProxy, type RunningProxy } from './support/proxy.js';
import { NODE_NAME, OTHER_NODE, POD_TCP_PORT, POD_UDP_PORT, SVC, writeInitialManifests } from './support/scenario.js';

const pre = await e2ePreflight('node agent');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpna';
const VARIANT = 'nft' as const;
const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
const FIRST_SYNC_TIMEOUT_MS = existsSync(PROXY_MAIN_JS) ? 30_000 : 120_000;

/** The LoadBalancer service of the health-check test (not in the shared scenario). */
const HC = { name: 'hc', ip: '10.96.0.40', port: 80, nodePort: 30100, healthCheckNodePort: 32100, ingress: '203.0.113.40' } as const;
const HEALTHZ_PORT = 10256;
const METRICS = '127.0.0.1:10249';

const CONNTRACK_KEYS = {
  established: 'nf_conntrack_tcp_timeout_established',
  closeWait: 'nf_conntrack_tcp_timeout_close_wait',
  udp: 'nf_conntrack_udp_timeout',
} as const;
type CtKey = keyof typeof CONNTRACK_KEYS;


/** The root namespace's conntrack sysctls (read only; a missing file reads as "(missing)"). */
function rootConntrackValues(): Record<CtKey, string> {
  const out = {} as Record<CtKey, string>;
  for (const [k, file] of Object.entries(CONNTRACK_KEYS) as [CtKey, string][]) {
    try {
      out[k] = readFileSync(`/proc/sys/net/netfilter/${file}`, 'utf8').trim();
    } catch {
      out[k] = '(missing)';
    }
  }
  return out;
}

describeNetns('node agent through bin/kube-proxy (iptables-nft, real netns)', () => {
  let node: SimulatedNode | undefined;
  let servers: EchoServer[] = [];
  const proxies: RunningProxy[] = [];
  let agentProxy: RunningProxy | undefined;
  let dir = '';
  let manifests = '';
  let rootBefore: Record<CtKey, string> | undefined;

  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');

  function launch(name: string, extra: readonly string[]): RunningProxy {
    const p = startProxy(n(), proxyArgs({ manifestsDir: manifests, extra }), { logFile: join(dir, `${name}.log`) });
    proxies.push(p);
    return p;
  }

  /** Waits until the web ClusterIP rule is in nat (a fresh node: this is the proxy's first sync). */
  async function waitRules(p: RunningProxy, what: string): Promise<void> {
    await waitFor(
      what,
      async () => {
        if (p.exited()) fail(`kube-proxy exited with ${p.exitCode()}:\n${p.tail(60)}`);
        const nat = await iptablesSave(n(), n().ns.node, VARIANT, 'nat');
        return nat.includes(`${SVC.web.ip}/32`) && nat.includes('KUBE-SERVICES') ? true : undefined;
      },
      { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 200 },
    );
  }

  /** The proxy's own evidence of a successful sync: its last-sync timestamp gauge (metrics on 127.0.0.1 of the node). */
  async function lastSyncTimestamp(p: RunningProxy): Promise<number | undefined> {
    if (p.exited()) fail(`kube-proxy exited with ${p.exitCode()}:\n${p.tail(60)}`);
    const r = await httpGet(n(), n().ns.node, `http://${METRICS}/metrics`, 1000);
    if (r.status !== 200) return undefined;
    const m = /^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{[^}]*ip_family="IPv4"[^}]*\}\s+(\S+)/m.exec(r.body);
    const v = m ? Number(m[1]) : NaN;
    return v > 0 ? v : undefined;
  }

  async function diagnostics(): Promise<string> {
    const nd = node;
    const save = nd ? await iptablesSave(nd, nd.ns.node, VARIANT).catch((x: Error) => x.message) : '(no topology)';
    const logs = proxies.map((p, i) => `=== proxy #${i + 1} log tail\n${p.tail(40)}`).join('\n');
    return `=== iptables-${VARIANT}-save (node)\n${save}\n${logs}\n`;
  }

  // The suite stops and restarts proxies on purpose, so no single proxy gates the checks.
  const runner = new CheckRunner({ dir: () => dir, diagnostics, proxy: () => undefined });
  const timings = runner.timings;
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);

  beforeAll(() => runner.setup(async () => {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    rootBefore = rootConntrackValues();
    const started = Date.now();
    dir = mkdtempSync(join(tmpdir(), 'kp-e2e-agent-'));
    manifests = join(dir, 'manifests');
    await cleanupStaleRuns(TAG);
    node = await createSimulatedNode({ prefix: runPrefix(TAG) });
    servers = await Promise.all(
      node.pods.map((pd) => startEchoServer(n(), pd.ns, { tcpPorts: [POD_TCP_PORT], udpPorts: [POD_UDP_PORT], maxLifetimeS: 600 })),
    );
    writeInitialManifests(manifests, node);
    writeManifest(
      manifests,
      'svc-hc.yaml',
      service({
        name: HC.name,
        type: 'LoadBalancer',
        clusterIP: HC.ip,
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: HC.healthCheckNodePort,
        loadBalancerIngressIPs: [HC.ingress],
        ports: [{ name: 'http', port: HC.port, targetPort: POD_TCP_PORT, nodePort: HC.nodePort }],
      }),
    );
    writeHcSlice(NODE_NAME);
    await iptables(node, node.ns.node, VARIANT, ['-t', 'mangle', '-N', HINT_CHAIN]);
    timings['setup (netns + echo servers)'] = Date.now() - started;
  }), 150_000);

  afterAll(async () => {
    const stops = await Promise.all(proxies.map((p) => p.stop()));
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    console.log(runner.summary('node-agent e2e timings (ms)', `\n  proxy stops: ${JSON.stringify(stops)}`));
    if (dir && runner.failures === 0) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** The hc service's only endpoint is pod1, on `nodeName`. */
  function writeHcSlice(nodeName: string): void {
    const p1 = n().pods[0] ?? fail('no pod1');
    writeManifest(
      manifests,
      'eps-hc.yaml',
      endpointSlice({ service: HC.name, ports: [{ name: 'http', port: POD_TCP_PORT }], endpoints: [{ ip: p1.ip, podName: p1.name, nodeName }] }),
    );
  }

  it('SIGTERM + restart keeps ClusterIP and NodePort traffic flowing (exit 0, rules left in place)', () =>
    check('restart', async () => {
      const nd = n();
      const args = [`--metrics-bind-address=${METRICS}`];
      const t0 = Date.now();
      const first = launch('proxy-restart-1', args);
      await waitRules(first, 'the first proxy to program its first sync');
      timings['restart: proxy #1 start → rules'] = Date.now() - t0;

      // Continuous traffic (support/continuous-traffic.ts: batches of 50 requests, one every 20 ms, each
      // bounded by 1 s) from pod3 to the ClusterIP and from the client to the NodePort, until 1 s after
      // the second proxy's first sync (bounded: at most 60 batches / 90 s per stream).
      const traffic = startContinuousTraffic(nd, [
        { what: 'pod3 → ClusterIP', ns: nd.ns.pods[2]!, host: SVC.web.ip, port: SVC.web.port },
        { what: 'client → NodePort', ns: nd.ns.client, host: nd.nodeIp, port: SVC.web.nodePort },
      ]);
      const tTraffic = traffic.startedAt;
      try {
        await new Promise((r) => setTimeout(r, 2000));

        const tStop = Date.now();
        const stop = await first.stop();
        timings['restart: SIGTERM → exit'] = Date.now() - tStop;
        if (stop.code !== 0) fail(`the first proxy exited with ${JSON.stringify(stop)} after SIGTERM, want 0:\n${first.tail(40)}`);
        const nat = await iptablesSave(nd, nd.ns.node, VARIANT, 'nat');
        if (!nat.includes(`${SVC.web.ip}/32`) || !nat.includes(`--dport ${SVC.web.nodePort}`)) {
          fail(`the rules were removed on SIGTERM (they must stay):\n${nat}`);
        }

        const tStart = Date.now();
        const second = launch('proxy-restart-2', args);
        const synced = await waitFor(
          'the second proxy to report its first sync (sync_proxy_rules_last_timestamp_seconds)',
          () => lastSyncTimestamp(second),
          { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 200 },
        );
        const tSynced = Date.now();
        timings['restart: proxy #2 start → first sync'] = tSynced - tStart;
        if (synced * 1000 < tStart - 1000) fail(`the second proxy's last sync (${synced}) predates its start`);
        await new Promise((r) => setTimeout(r, 1000));
        const results = await traffic.stop();
        const [a, b] = results as [StreamResult, StreamResult];
        timings['restart: traffic'] =
          `${Date.now() - tTraffic} ms, ${a.requests} ClusterIP + ${b.requests} NodePort requests; ` +
          `no proxy from ${tStop - tTraffic} to ${tStart - tTraffic} ms, second synced at ${tSynced - tTraffic} ms`;
        const failed = failedBatches(results);
        if (failed.length > 0) fail(`requests failed across the restart:\n  ${failed.join('\n  ')}`);
        if (a.requests < 100 || b.requests < 100) fail(`too little traffic: ${timings['restart: traffic']}`);
        if (second.exited()) fail(`the second proxy exited (${second.exitCode()})`);
        // Not asserted (seen once: 143, i.e. killed by the SIGTERM without the graceful path, when the
        // SIGTERM came ~1 s after its first sync on a loaded machine); recorded for the report.
        timings['restart: proxy #2 SIGTERM → exit'] = JSON.stringify(await second.stop());
      } finally {
        await traffic.stop().catch(() => undefined);
      }
    }));

  /** Started by whichever of the next two checks runs first. */
  async function ensureAgentProxy(): Promise<RunningProxy> {
    if (agentProxy && !agentProxy.exited()) return agentProxy;
    if (agentProxy) fail(`the agent proxy exited (${agentProxy.exitCode()}):\n${agentProxy.tail(40)}`);
    // A proxy left running by a failed earlier check would hold the ports.
    await Promise.all(proxies.map((p) => p.stop()));
    const t0 = Date.now();
    agentProxy = launch('proxy-agent', [
      '--conntrack-tcp-timeout-established=2h0m0s',
      '--conntrack-tcp-timeout-close-wait=30m0s',
      '--conntrack-udp-timeout=45s',
      '--conntrack-max-per-core=0',
      `--healthz-bind-address=${n().nodeIp}:${HEALTHZ_PORT}`,
      `--metrics-bind-address=${METRICS}`,
    ]);
    await waitFor('the agent proxy to report its first sync', () => lastSyncTimestamp(agentProxy!), {
      timeoutMs: FIRST_SYNC_TIMEOUT_MS,
      intervalMs: 200,
    });
    timings['agent proxy start → first sync'] = Date.now() - t0;
    return agentProxy;
  }

  it('sets the conntrack sysctls inside the node namespace only (2h / 30m / 45s); the root namespace keeps its values', () =>
    check('conntrack-sysctls', async () => {
      const nd = n();
      await ensureAgentProxy();
      const want: Record<CtKey, string> = { established: '7200', closeWait: '1800', udp: '45' };
      const read = async (): Promise<Record<CtKey, string>> => {
        const out = {} as Record<CtKey, string>;
        for (const [k, file] of Object.entries(CONNTRACK_KEYS) as [CtKey, string][]) {
          const r = await nd.exec(nd.ns.node, 'cat', [`/proc/sys/net/netfilter/${file}`], { allowFailure: true, timeoutMs: 5000 });
          out[k] = r.code === 0 ? r.stdout.trim() : `(error: ${r.stderr.trim()})`;
        }
        return out;
      };
      // setupConntrack runs before the first sync, so the values are there already; poll briefly anyway.
      let got: Record<CtKey, string> | undefined;
      await waitFor(
        'the node namespace conntrack sysctls',
        async () => {
          got = await read();
          return JSON.stringify(got) === JSON.stringify(want) ? true : undefined;
        },
        { timeoutMs: 5000, intervalMs: 250 },
      ).catch(() => fail(`node namespace conntrack sysctls: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`));
      const rootAfter = rootConntrackValues();
      if (JSON.stringify(rootAfter) !== JSON.stringify(rootBefore)) {
        fail(`the root namespace's conntrack sysctls changed: before ${JSON.stringify(rootBefore)}, after ${JSON.stringify(rootAfter)}`);
      }
      timings['conntrack sysctls'] = `node ${JSON.stringify(got)}; root ${JSON.stringify(rootAfter)}`;
    }));

  it('serves the health-check node port (200 ↔ 503 with the local endpoints) and /healthz from the node namespace', () =>
    check('health-check', async () => {
      const nd = n();
      await ensureAgentProxy();
      const url = `http://${nd.nodeIp}:${HC.healthCheckNodePort}/`;
      const parse = (a: HttpAnswer): { localEndpoints?: number; serviceProxyHealthy?: boolean; service?: { name?: string } } => {
        try {
          return JSON.parse(a.body) as { localEndpoints?: number };
        } catch {
          return {};
        }
      };
      let last: HttpAnswer | undefined;
      await waitFor(
        `${url} to answer 200 with one local endpoint`,
        async () => {
          last = await httpGet(nd, nd.ns.client, url, 1000);
          return last.status === 200 && parse(last).localEndpoints === 1 ? true : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 250 },
      ).catch(() => fail(`health check before the move: ${JSON.stringify(last)}`));
      const ok = parse(last!);
      if (ok.service?.name !== HC.name) fail(`wrong service in the answer: ${last!.body}`);
      if (last!.headers['x-load-balancing-endpoint-weight'] !== '1') fail(`X-Load-Balancing-Endpoint-Weight: ${JSON.stringify(last!.headers)}`);

      const t0 = Date.now();
      writeHcSlice(OTHER_NODE);
      await waitFor(
        `${url} to answer 503 with no local endpoints`,
        async () => {
          last = await httpGet(nd, nd.ns.client, url, 1000);
          return last.status === 503 && parse(last).localEndpoints === 0 ? true : undefined;
        },
        { timeoutMs: 8000, intervalMs: 200 },
      ).catch(() => fail(`health check after moving the endpoint to ${OTHER_NODE}: ${JSON.stringify(last)}`));
      timings['health-check 200 → 503 latency'] = Date.now() - t0;

      const healthz = await httpGet(nd, nd.ns.client, `http://${nd.nodeIp}:${HEALTHZ_PORT}/healthz`, 2000);
      if (healthz.status !== 200) fail(`/healthz from the client: ${JSON.stringify(healthz)}`);

      // And back: the endpoint returns to this node.
      writeHcSlice(NODE_NAME);
      await waitFor(
        `${url} to answer 200 again`,
        async () => {
          last = await httpGet(nd, nd.ns.client, url, 1000);
          return last.status === 200 && parse(last).localEndpoints === 1 ? true : undefined;
        },
        { timeoutMs: 8000, intervalMs: 200 },
      ).catch(() => fail(`health check after moving the endpoint back: ${JSON.stringify(last)}`));
    }));
});
