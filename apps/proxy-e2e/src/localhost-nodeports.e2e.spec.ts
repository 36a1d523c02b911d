/**
 * Real-kernel e2e of localhost NodePorts in nftables mode (KEP-6032, issue 23 item 2):
 * `bin/kube-proxy --proxy-mode=nftables --feature-gates=KubeProxyNFTablesLocalhostNodePorts=true`
 * with nodePortAddresses naming 127.0.0.0/8 and ::1 runs in the node namespace of a dual-stack
 * simulated node (libs/testing/netns). Its userspace listeners on 127.0.0.1 / ::1 carry real
 * connections from the node to the pods; eTP Local without a local endpoint has no listener
 * (refused); UDP to a loopback NodePort is refused by the counted nft reject, and the counter and
 * kubeproxy_nftables_localhost_nodeport_rejected_packets_total go up.
 *
 * Root-only; skipped (loudly) otherwise. Every wait and probe is bounded; nothing touches the root
 * namespace.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cleanupStaleRuns,
  createSimulatedNode,
  describeProbe,
  probe,
  runPrefix,
  startEchoServer,
  waitFor,
  type EchoServer,
  type ProbeOptions,
  type ProbeResult,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { CheckRunner } from './support/check-runner.js';
import { endpointSlice, removeManifest, service, writeManifest, type EndpointSpec } from './support/manifests.js';
import { nft, nftRuleset } from './support/nft-tables.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { allOk, fail, onlyPods } from './support/probe-assertions.js';
import { counterValue, metricValue, scrapeMetrics } from './support/proxy-metrics.js';
import { proxyArgs, startProxy, type RunningProxy } from './support/proxy.js';
import { POD_TCP_PORT, POD_UDP_PORT } from './support/scenario.js';

const pre = await e2ePreflight('localhost NodePorts (nftables)');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kplh';
const NODE_NAME = 'node-1';
const OTHER_NODE = 'node-2';
const METRICS = '127.0.0.1:10249';
const CLUSTER_CIDRS = '10.244.0.0/16,fd00:10:244::/48';
const FIRST_SYNC_TIMEOUT_MS = 120_000;
const CHANGE_BOUND_MS = 15_000;
const TRY_TIMEOUT_MS = 2000;

const NP = { web: 30080, local: 30082, localNone: 30083, aff: 30084, web6: 30086, dns: 30053 } as const;

describeNetns('localhost NodePorts through bin/kube-proxy --proxy-mode=nftables (KubeProxyNFTablesLocalhostNodePorts)', () => {
  let node: SimulatedNode | undefined;
  let proxy: RunningProxy | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  let manifests = '';

  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const fromNode = (o: ProbeOptions): Promise<ProbeResult> => probe(n(), n().ns.node, { stopAfterErrors: 3, timeoutMs: TRY_TIMEOUT_MS, ...o });
  const metrics = (): Promise<string> => scrapeMetrics(n(), n().ns.node, METRICS);

  async function diagnostics(): Promise<string> {
    const nd = node;
    if (!nd) return '(no topology)';
    const ss = (await nd.exec(nd.ns.node, 'ss', ['-H', '-l', '-n', '-t'])).stdout;
    return `=== nft list ruleset (node)\n${await nftRuleset(nd, nd.ns.node)}\n=== ss -ltn (node)\n${ss}\n=== proxy log\n${proxy ? proxy.tail(80) : '(not started)'}\n`;
  }
  const runner = new CheckRunner({ dir: () => dir, diagnostics, proxy: () => proxy });
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);

  function podEndpoints(pods: readonly number[], family: 'IPv4' | 'IPv6', nodeName = NODE_NAME): EndpointSpec[] {
    return pods.map((i) => {
      const p = n().pods[i - 1] ?? fail(`no pod${i}`);
      const ip = family === 'IPv6' ? p.ip6 : p.ip;
      return { ip: ip ?? fail(`pod${i} has no ${family} address`), podName: p.name, nodeName };
    });
  }

  /** A NodePort Service of one family with its slice (manifests.ts writes IPv4; IPv6 is rewritten). */
  function writeService(name: string, family: 'IPv4' | 'IPv6', clusterIP: string, protocol: 'TCP' | 'UDP', nodePort: number, endpoints: EndpointSpec[], extra: { sessionAffinity?: 'ClientIP'; externalTrafficPolicy?: 'Local' } = {}): void {
    const targetPort = protocol === 'UDP' ? POD_UDP_PORT : POD_TCP_PORT;
    const svc = service({ name, type: 'NodePort', clusterIP, ports: [{ name: 'p', port: 80, targetPort, protocol, nodePort }], ...extra });
    const slice = endpointSlice({ service: name, ports: [{ name: 'p', port: targetPort, protocol }], endpoints });
    writeManifest(manifests, `svc-${name}.yaml`, family === 'IPv4' ? svc : { ...svc, spec: { ...(svc['spec'] as object), ipFamilies: ['IPv6'] } });
    writeManifest(manifests, `eps-${name}.yaml`, family === 'IPv4' ? slice : { ...slice, addressType: 'IPv6' });
  }

  function writeScenario(): void {
    const nd = n();
    writeManifest(manifests, 'node.yaml', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE_NAME, labels: { 'kubernetes.io/hostname': NODE_NAME } },
      spec: { podCIDR: nd.podCidr, podCIDRs: [nd.podCidr, 'fd00:10:244:1::/64'] },
      status: { addresses: [{ type: 'InternalIP', address: nd.nodeIp }, { type: 'InternalIP', address: nd.nodeIp6 ?? fail('no IPv6 node address') }, { type: 'Hostname', address: NODE_NAME }] },
    });
    writeService('web', 'IPv4', '10.96.0.10', 'TCP', NP.web, podEndpoints([1, 2], 'IPv4'));
    writeService('web6', 'IPv6', 'fd00:10:96::10', 'TCP', NP.web6, podEndpoints([1, 2], 'IPv6'));
    // pod1 on this node, pod2 (as far as the proxy knows) on another.
    writeService('local', 'IPv4', '10.96.0.22', 'TCP', NP.local, [...podEndpoints([1], 'IPv4'), ...podEndpoints([2], 'IPv4', OTHER_NODE)], { externalTrafficPolicy: 'Local' });
    writeService('local-none', 'IPv4', '10.96.0.23', 'TCP', NP.localNone, podEndpoints([1, 2], 'IPv4', OTHER_NODE), { externalTrafficPolicy: 'Local' });
    writeService('aff', 'IPv4', '10.96.0.24', 'TCP', NP.aff, podEndpoints([1, 2], 'IPv4'), { sessionAffinity: 'ClientIP' });
    writeService('dns', 'IPv4', '10.96.0.53', 'UDP', NP.dns, podEndpoints([1, 2], 'IPv4'));
  }

  beforeAll(
    () =>
      runner.setup(async () => {
        if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
        dir = mkdtempSync(join(tmpdir(), 'kp-e2e-localhost-'));
        manifests = join(dir, 'manifests');
        mkdirSync(manifests, { recursive: true });
        await cleanupStaleRuns(TAG);
        node = await createSimulatedNode({ prefix: runPrefix(TAG), ipv6: true, podCount: 2 });
        servers = await Promise.all(n().pods.map((pd) => startEchoServer(n(), pd.ns, { tcpPorts: [POD_TCP_PORT], udpPorts: [POD_UDP_PORT], maxLifetimeS: 600 })));
        writeScenario();
        const extra = [
          '--feature-gates=KubeProxyNFTablesLocalhostNodePorts=true',
          `--nodeport-addresses=127.0.0.0/8,::1/128,${n().nodeIp}/32`,
          `--metrics-bind-address=${METRICS}`,
        ];
        proxy = startProxy(n(), proxyArgs({ manifestsDir: manifests, mode: 'nftables', hostname: NODE_NAME, clusterCidr: CLUSTER_CIDRS, extra }), { logFile: join(dir, 'proxy.log') });
        const pr = proxy;
        await waitFor(
          'the localhost NodePort listener of web on 127.0.0.1',
          async () => {
            if (pr.exited()) fail(`kube-proxy exited with ${pr.exitCode()}:\n${pr.tail(60)}`);
            const r = await fromNode({ host: '127.0.0.1', port: NP.web, count: 1, timeoutMs: 1000 });
            return r.ok === 1 ? true : undefined;
          },
          { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 300 },
        );
      }),
    FIRST_SYNC_TIMEOUT_MS + 60_000,
  );

  afterAll(async () => {
    await proxy?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    console.log(runner.summary('localhost NodePorts e2e timings (ms)', ''));
    if (dir && runner.failures === 0) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('127.0.0.1:NODEPORT reaches the endpoints from the node, round robin over both', () =>
    check('ipv4-loopback', async () => {
      const r = await fromNode({ host: '127.0.0.1', port: NP.web, count: 20 });
      allOk(r, 'node → 127.0.0.1:web');
      onlyPods(r, ['pod1', 'pod2'], 'node → 127.0.0.1:web');
      if (!r.byPod['pod1'] || !r.byPod['pod2']) fail(`not spread over both endpoints: ${describeProbe(r)}`);
    }));

  it('[::1]:NODEPORT reaches an IPv6 endpoint', () =>
    check('ipv6-loopback', async () => {
      const r = await fromNode({ host: '::1', port: NP.web6, count: 10 });
      allOk(r, 'node → [::1]:web6');
      onlyPods(r, ['pod1', 'pod2'], 'node → [::1]:web6');
      // The proxy dials the pod's IPv6 address: the pod sees the node's address on the bridge.
      if (!Object.keys(r.sources).every((s) => s.includes(':'))) fail(`IPv6 endpoint saw a non-IPv6 source: ${describeProbe(r)}`);
    }));

  it('externalTrafficPolicy Local: only the local endpoint; none local: no listener, connection refused', () =>
    check('etp-local', async () => {
      const local = await fromNode({ host: '127.0.0.1', port: NP.local, count: 10 });
      allOk(local, 'node → 127.0.0.1:local');
      onlyPods(local, ['pod1'], 'node → 127.0.0.1:local');
      const none = await fromNode({ host: '127.0.0.1', port: NP.localNone, count: 3, timeoutMs: 1000, stopAfterErrors: 0 });
      if (none.ok !== 0 || Object.keys(none.errors).some((e) => e !== 'ECONNREFUSED')) fail(`local-none on 127.0.0.1 was not refused: ${describeProbe(none)}`);
    }));

  it('ClientIP affinity: every connection from the node goes to one endpoint', () =>
    check('affinity', async () => {
      const r = await fromNode({ host: '127.0.0.1', port: NP.aff, count: 20 });
      allOk(r, 'node → 127.0.0.1:aff');
      if (Object.keys(r.byPod).length !== 1) fail(`affinity did not pin: ${describeProbe(r)}`);
    }));

  it('UDP to a loopback NodePort is rejected by the counted nft rule; the counter and the metric go up', () =>
    check('udp-rejected', async () => {
      const table = (await nft(n(), n().ns.node, ['list', 'table', 'ip', 'kube-proxy'])).stdout;
      if (!/udp \. 30053 : goto localhost-nodeport-reject-udp/.test(table)) fail(`no reject element for udp/30053:\n${table}`);
      if (/tcp \. 3008\d : goto localhost-nodeport-reject-tcp/.test(table)) fail(`a served TCP NodePort is rejected:\n${table}`);
      const packets = async (): Promise<number> => {
        const listing = (await nft(n(), n().ns.node, ['list', 'chain', 'ip', 'kube-proxy', 'localhost-nodeport-reject-udp'])).stdout;
        const m = /counter packets (\d+)/.exec(listing) ?? fail(`no counter in:\n${listing}`);
        return Number(m[1]);
      };
      const before = await packets();
      const metricBefore = counterValue(await metrics(), 'kubeproxy_nftables_localhost_nodeport_rejected_packets_total', { ip_family: 'IPv4', protocol: 'UDP' }) ?? 0;
      const r = await fromNode({ proto: 'udp', host: '127.0.0.1', port: NP.dns, count: 3, timeoutMs: 1000, stopAfterErrors: 0 });
      if (r.ok !== 0) fail(`UDP on 127.0.0.1:${NP.dns} was answered: ${describeProbe(r)}`);
      const after = await packets();
      if (after < before + 3) fail(`reject counter ${before} → ${after} after 3 datagrams`);
      const metricAfter = counterValue(await metrics(), 'kubeproxy_nftables_localhost_nodeport_rejected_packets_total', { ip_family: 'IPv4', protocol: 'UDP' }) ?? fail('no rejected-packets metric');
      if (metricAfter < metricBefore + 3) fail(`metric ${metricBefore} → ${metricAfter}`);
      // The same UDP service answers on the node IP (the kernel path is untouched).
      const onNodeIP = await fromNode({ proto: 'udp', host: n().nodeIp, port: NP.dns, count: 3 });
      allOk(onNodeIP, `node → ${n().nodeIp}:${NP.dns}/udp`);
    }));

  it('metrics: listeners per family, no creation failures', () =>
    check('metrics', async () => {
      const text = await metrics();
      expect(metricValue(text, 'kubeproxy_nftables_localhost_nodeport_listeners', { ip_family: 'IPv4' })).toBe(3);
      expect(metricValue(text, 'kubeproxy_nftables_localhost_nodeport_listeners', { ip_family: 'IPv6' })).toBe(1);
      expect(counterValue(text, 'kubeproxy_nftables_localhost_nodeport_listener_creation_failures_total', { ip_family: 'IPv4' })).toBe(0);
    }));

  it('a deleted Service loses its listener (refused within a sync)', () =>
    check('service-removed', async () => {
      removeManifest(manifests, 'svc-aff.yaml');
      removeManifest(manifests, 'eps-aff.yaml');
      await waitFor(
        'the aff listener to close',
        async () => {
          const r = await fromNode({ host: '127.0.0.1', port: NP.aff, count: 1, timeoutMs: 1000, stopAfterErrors: 0 });
          return r.errors['ECONNREFUSED'] === 1 ? true : undefined;
        },
        { timeoutMs: CHANGE_BOUND_MS, intervalMs: 300 },
      );
      expect(metricValue(await metrics(), 'kubeproxy_nftables_localhost_nodeport_listeners', { ip_family: 'IPv4' })).toBe(2);
    }));
});
