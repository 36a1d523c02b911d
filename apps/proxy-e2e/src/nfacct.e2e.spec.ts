/**
 * Real-kernel e2e of the iptables proxier's nfacct counters (issue 10, hole 5): `bin/kube-proxy
 * --proxy-mode=iptables` (iptables-nft, not dry-run) in the node namespace of a simulated node
 * creates upstream's two counters in that namespace, writes their `-m nfacct` match into the
 * KUBE-FORWARD INVALID drop and the localhost NodePort accept, and exports their packet counts on
 * /metrics: a localhost NodePort connection from the node makes
 * kubeproxy_iptables_localhost_nodeports_accepted_packets_total rise.
 *
 * Root-only; skipped (loudly) otherwise. Nothing touches the root namespace (nfacct counters are per
 * network namespace; the root's list is only read, before and after, to prove it).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cleanupStaleRuns,
  createSimulatedNode,
  describeProbe,
  iptables,
  iptablesSave,
  probe,
  run,
  runPrefix,
  startEchoServer,
  waitFor,
  type EchoServer,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { httpGet } from './support/http-get.js';
import { endpointSlice, nodeManifest, service, writeManifest } from './support/manifests.js';
import { fail } from './support/probe-assertions.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { PROXY_MAIN_JS, proxyArgs, startProxy, type RunningProxy } from './support/proxy.js';
import { NODE_NAME, POD_TCP_PORT } from './support/scenario.js';

const pre = await e2ePreflight('nfacct counters');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpnfa';
const FIRST_SYNC_TIMEOUT_MS = existsSync(PROXY_MAIN_JS) ? 30_000 : 120_000;
const METRICS = '127.0.0.1:10249';
const SVC = { name: 'np', ip: '10.96.0.60', port: 80, nodePort: 30160 } as const;
const INVALID = 'kubeproxy_iptables_ct_state_invalid_dropped_packets_total';
const LOCALHOST = 'kubeproxy_iptables_localhost_nodeports_accepted_packets_total';
const TRIES = 5;

/** `nfacct list` counter names (in namespace `ns`, or the root namespace when undefined). */
async function nfacctNames(node: SimulatedNode | undefined, ns?: string): Promise<string[]> {
  const r = ns && node ? await node.exec(ns, 'nfacct', ['list']) : await run('nfacct', ['list'], { timeoutMs: 10_000 });
  return [...r.stdout.matchAll(/\}\s*=\s*(\S+?);/g)].map((m) => m[1]!).sort();
}

describeNetns('nfacct counters through bin/kube-proxy (iptables-nft, real netns)', () => {
  let node: SimulatedNode | undefined;
  let server: EchoServer | undefined;
  let proxy: RunningProxy | undefined;
  let dir = '';
  let rootBefore: string[] = [];
  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const p = (): RunningProxy => proxy ?? fail('the proxy was not started (see the beforeAll error)');

  /** The two metrics' values on /metrics (undefined when absent). */
  async function scrape(): Promise<{ invalid?: number; localhost?: number; body: string }> {
    if (p().exited()) fail(`kube-proxy exited with ${p().exitCode()}:\n${p().tail(40)}`);
    const r = await httpGet(n(), n().ns.node, `http://${METRICS}/metrics`, 2000);
    if (r.status !== 200) fail(`GET /metrics answered ${r.status}`);
    const value = (name: string): number | undefined => {
      const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(r.body);
      return m ? Number(m[1]) : undefined;
    };
    const invalid = value(INVALID);
    const localhost = value(LOCALHOST);
    return { body: r.body, ...(invalid !== undefined ? { invalid } : {}), ...(localhost !== undefined ? { localhost } : {}) };
  }

  beforeAll(async () => {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    const r = await run('nfacct', ['version'], { allowFailure: true, timeoutMs: 10_000 });
    if (r.code !== 0) fail(`nfacct is not installed (apt-get install -y nfacct): ${r.stderr}`);
    rootBefore = await nfacctNames(undefined);
    dir = mkdtempSync(join(tmpdir(), 'kp-e2e-nfacct-'));
    const manifests = join(dir, 'manifests');
    mkdirSync(manifests);
    await cleanupStaleRuns(TAG);
    node = await createSimulatedNode({ prefix: runPrefix(TAG), podCount: 1 });
    const pod = node.pods[0]!;
    server = await startEchoServer(node, pod.ns, { tcpPorts: [POD_TCP_PORT], maxLifetimeS: 300 });
    writeManifest(manifests, 'node.yaml', nodeManifest(NODE_NAME, node.nodeIp, node.podCidr));
    writeManifest(
      manifests,
      'svc.yaml',
      service({ name: SVC.name, type: 'NodePort', clusterIP: SVC.ip, ports: [{ name: 'http', port: SVC.port, targetPort: POD_TCP_PORT, nodePort: SVC.nodePort }] }),
    );
    writeManifest(
      manifests,
      'eps.yaml',
      endpointSlice({ service: SVC.name, ports: [{ name: 'http', port: POD_TCP_PORT }], endpoints: [{ ip: pod.ip, podName: pod.name, nodeName: NODE_NAME }] }),
    );
    // kubelet's hint chain: the proxy picks iptables-nft.
    await iptables(node, node.ns.node, 'nft', ['-t', 'mangle', '-N', 'KUBE-IPTABLES-HINT']);
    proxy = startProxy(node, proxyArgs({ manifestsDir: manifests, syncPeriod: '30s', extra: [`--metrics-bind-address=${METRICS}`] }), {
      logFile: join(dir, 'proxy.log'),
    });
    await waitFor(
      'the proxy to program the NodePort service',
      async () => {
        if (proxy!.exited()) fail(`kube-proxy exited with ${proxy!.exitCode()}:\n${proxy!.tail(60)}`);
        const nat = await iptablesSave(n(), n().ns.node, 'nft', 'nat');
        return nat.includes(`--dport ${SVC.nodePort}`) ? true : undefined;
      },
      { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 200 },
    );
  }, FIRST_SYNC_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    const stop = await proxy?.stop();
    await server?.stop();
    await node?.destroy();
    console.log(`nfacct e2e: proxy stop ${JSON.stringify(stop)}`);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('creates both counters in the node namespace only (the root namespace keeps its own list)', async () => {
    expect(await nfacctNames(n(), n().ns.node)).toEqual(['ct_state_invalid_dropped_pkts', 'localhost_nps_accepted_pkts']);
    expect(await nfacctNames(undefined)).toEqual(rootBefore);
  });

  it('writes the nfacct match into the INVALID drop and the localhost NodePort accept', async () => {
    const filter = await iptablesSave(n(), n().ns.node, 'nft', 'filter');
    const nat = await iptablesSave(n(), n().ns.node, 'nft', 'nat');
    // iptables-save prints two spaces after --nfacct-name.
    expect(filter).toMatch(/^-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name\s+ct_state_invalid_dropped_pkts -j DROP$/m);
    expect(nat).toMatch(
      new RegExp(`^-A KUBE-NODEPORTS .*-d 127\\.0\\.0\\.0/8 .*--dport ${SVC.nodePort} -m nfacct --nfacct-name\\s+localhost_nps_accepted_pkts -j KUBE-EXT-\\S+$`, 'm'),
    );
  });

  it('exports both counters, and localhost NodePort connections raise the localhost metric', async () => {
    const before = await scrape();
    if (before.localhost === undefined || before.invalid === undefined) fail(`the nfacct metrics are missing from /metrics:\n${before.body.slice(0, 4000)}`);
    expect(before.body).toContain(`# TYPE ${LOCALHOST} counter`);
    expect(before.body).toContain(`# TYPE ${INVALID} counter`);

    const r = await probe(n(), n().ns.node, { host: '127.0.0.1', port: SVC.nodePort, count: TRIES, intervalMs: 20, timeoutMs: 1000, maxTotalMs: 15_000 });
    if (r.ok !== TRIES) fail(`localhost NodePort connections failed: ${describeProbe(r)}\n${p().tail(30)}`);
    // nat rules see the first packet of each connection: one count per connection. The proxy reads the
    // counters at most once a second, so wait for the next read (bounded).
    const after = await waitFor(
      `${LOCALHOST} to rise by ${TRIES}`,
      async () => {
        const s = await scrape();
        return s.localhost !== undefined && s.localhost >= before.localhost! + TRIES ? s : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 300 },
    );
    expect(after.localhost).toBe(before.localhost + TRIES);
    const kernel = await n().exec(n().ns.node, 'nfacct', ['get', 'localhost_nps_accepted_pkts']);
    expect(Number(/pkts = (\d+)/.exec(kernel.stdout)?.[1])).toBe(after.localhost);
  });
});
