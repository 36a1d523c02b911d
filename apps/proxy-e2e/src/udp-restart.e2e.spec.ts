/**
 * Real-kernel e2e of issue 23 item 5a (upstream issue #122740): a proxy restart keeps the UDP conntrack
 * entries of services whose endpoints did not change, and still clears the entry of a flow whose
 * endpoint went away while the proxy was down.
 *
 * For iptables and nftables mode, each on its own simulated node (libs/testing/netns): a long UDP flow
 * (one datagram every 100 ms from a fixed source port of pod3 to the `dns` ClusterIP; the echo servers
 * on pod1/pod2 answer with their name) runs while `bin/kube-proxy --once` runs again over the rules of
 * an earlier `--once` (a restart). The node's conntrack table (timestamps on, in the node namespace
 * only) shows the flow's entry before and after: same id, same creation time, same endpoint; and every
 * datagram of the flow was answered by that one endpoint. Then the flow's endpoint is removed from the
 * EndpointSlice and the proxy restarted: the entry is deleted and the flow moves to the other pod.
 *
 * Every wait is bounded; the flows are bounded in count and time by probe.mjs.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cleanupStaleRuns,
  conntrack,
  createSimulatedNode,
  describeProbe,
  idle,
  probe,
  runPrefix,
  startEchoServer,
  waitFor,
  type EchoServer,
  type ProbeResult,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { CheckRunner } from './support/check-runner.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { endpointSlice, nodeManifest, service, writeManifest } from './support/manifests.js';
import { fail } from './support/probe-assertions.js';
import { proxyArgs, runProxyOnce } from './support/proxy.js';
import { NODE_NAME, POD_UDP_PORT, SVC, eps } from './support/scenario.js';

const pre = await e2ePreflight('UDP conntrack across a restart');
const describeNetns = pre.run ? describe : describe.skip;

/** The flow: one datagram every FLOW_INTERVAL_MS, long enough to outlast a `--once` run on a loaded machine. */
const FLOW_INTERVAL_MS = 100;
const FLOW_COUNT = 400;
const ONCE_TIMEOUT_MS = 120_000;
/** How old the flow's entry is when the proxy restarts. */
const ENTRY_AGE_MS = 4000;
/** Error of a creation time read from `delta-time` (whole seconds) and the time of the listing. */
const CREATED_SLACK_MS = 2000;

/** One conntrack entry of the flow, as `conntrack -L -o id,timestamp` prints it. */
interface FlowEntry {
  readonly line: string;
  readonly id: string;
  /** When the entry was created (ms since epoch, to the second): now − `delta-time`. */
  readonly createdMs: number;
  /** The reply source: the endpoint the flow is DNATed to. */
  readonly endpoint: string;
}

const MODES = [
  { mode: 'iptables', tag: 'kpuri' },
  { mode: 'nftables', tag: 'kpurn' },
] as const;

describeNetns.each(MODES)('UDP conntrack across a proxy restart ($mode mode)', ({ mode, tag }) => {
  let node: SimulatedNode | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  let manifests = '';
  let lastOnce = '';

  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const podName = (ip: string): string => n().pods.find((p) => p.ip === ip)?.name ?? ip;

  async function diagnostics(): Promise<string> {
    const nd = node;
    if (!nd) return '(no topology)';
    const ct = await conntrack(nd, nd.ns.node, ['-L', '-p', 'udp', '-o', 'id,timestamp']).then(
      (r) => r.stdout,
      (e: Error) => e.message,
    );
    return `=== conntrack -L -p udp (node)\n${ct}\n=== last --once output (tail)\n${lastOnce.slice(-6000)}\n`;
  }

  const runner = new CheckRunner({ dir: () => dir, diagnostics, proxy: () => undefined });
  const timings = runner.timings;

  function writeDns(pods: readonly number[]): void {
    writeManifest(
      manifests,
      'eps-dns.yaml',
      endpointSlice({ service: 'dns', ports: [{ name: 'dns', port: POD_UDP_PORT, protocol: 'UDP' }], endpoints: eps(n(), pods) }),
    );
  }

  /** One `--once` run of the proxy (a start, a full sync, conntrack cleanup, exit); returns its duration. */
  async function once(what: string): Promise<number> {
    const t0 = Date.now();
    const r = await runProxyOnce(n(), proxyArgs({ manifestsDir: manifests, mode, extra: ['--once'] }), { timeoutMs: ONCE_TIMEOUT_MS });
    lastOnce = `${r.stdout}\n${r.stderr}`;
    if (r.code !== 0) fail(`${what}: kube-proxy --once exited ${r.code}:\n${lastOnce.slice(-4000)}`);
    return Date.now() - t0;
  }

  /** The conntrack entries of pod3's flow from `sport` to the dns ClusterIP. */
  async function flowEntries(sport: number): Promise<FlowEntry[]> {
    const r = await conntrack(n(), n().ns.node, ['-L', '-p', 'udp', '-f', 'ipv4', '--orig-dst', SVC.dns.ip, '--sport', String(sport), '-o', 'id,timestamp']);
    const seen = Date.now();
    return r.stdout
      .split('\n')
      .filter((l) => l.startsWith('udp '))
      .map((line) => {
        const reply = / src=(\S+) dst=\S+ sport=\d+ dport=\d+.* src=(\S+) /.exec(line);
        return {
          line,
          id: / id=(\d+)/.exec(line)?.[1] ?? '',
          createdMs: seen - Number(/ delta-time=(\d+)/.exec(line)?.[1] ?? NaN) * 1000,
          endpoint: reply?.[2] ?? '',
        };
      });
  }

  /** Waits (bounded) until the flow from `sport` has exactly one entry, and returns it. */
  async function oneEntry(sport: number, what: string): Promise<FlowEntry> {
    let last: FlowEntry[] = [];
    return waitFor(
      what,
      async () => {
        last = await flowEntries(sport);
        return last.length === 1 ? last[0] : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    ).catch(() => fail(`${what}: want one conntrack entry, have ${last.length}:\n${last.map((e) => e.line).join('\n')}`));
  }

  /** A long flow from pod3's `sport`; resolves when it is over (bounded by probe.mjs). */
  function longFlow(sport: number): Promise<ProbeResult> {
    const pod3 = n().ns.pods[2] ?? fail('no pod3');
    return probe(n(), pod3, {
      proto: 'udp',
      host: SVC.dns.ip,
      port: SVC.dns.port,
      sport,
      count: FLOW_COUNT,
      intervalMs: FLOW_INTERVAL_MS,
      timeoutMs: 500,
      maxTotalMs: FLOW_COUNT * (FLOW_INTERVAL_MS + 500) + 5000,
    });
  }

  beforeAll(
    () =>
      runner.setup(async () => {
        if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
        const t0 = Date.now();
        dir = mkdtempSync(join(tmpdir(), `kp-e2e-udp-restart-${mode}-`));
        manifests = join(dir, 'manifests');
        await cleanupStaleRuns(tag);
        node = await createSimulatedNode({ prefix: runPrefix(tag) });
        servers = await Promise.all(node.pods.map((pd) => startEchoServer(n(), pd.ns, { udpPorts: [POD_UDP_PORT], maxLifetimeS: 600 })));
        // Entry creation times (delta-time) prove an entry was not re-created; the setting is the node namespace's own.
        await node.exec(node.ns.node, 'sysctl', ['-q', '-w', 'net.netfilter.nf_conntrack_timestamp=1']);
        mkdirSync(manifests, { recursive: true });
        writeManifest(manifests, 'node-1.yaml', nodeManifest(NODE_NAME, node.nodeIp, node.podCidr));
        writeManifest(
          manifests,
          'svc-dns.yaml',
          service({ name: 'dns', clusterIP: SVC.dns.ip, ports: [{ name: 'dns', port: SVC.dns.port, targetPort: POD_UDP_PORT, protocol: 'UDP' }] }),
        );
        writeDns([1, 2]);
        timings['setup'] = Date.now() - t0;
        timings['first --once'] = await once('first start');
      }),
    150_000,
  );

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    console.log(runner.summary(`UDP restart e2e (${mode}) timings (ms)`));
    if (dir && runner.failures === 0) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('a restart with unchanged endpoints keeps the flow: same conntrack entry, same endpoint, answered throughout', () =>
    runner.check(`${mode}-keep`, async () => {
      const SPORT = 41_000;
      const started = Date.now();
      const flow = longFlow(SPORT);
      flow.catch(() => undefined); // awaited below; a failed check must not leave it unhandled
      const before = await oneEntry(SPORT, 'the flow to be tracked');
      if (before.id === '' || Number.isNaN(before.createdMs)) fail(`no id or delta-time in the entry: ${before.line}`);
      // Let the entry age first: one re-created by the restart would then be younger by at least this much.
      await idle(ENTRY_AGE_MS);
      timings['restart --once'] = await once('restart');
      const restartEnded = Date.now() - started;
      const after = await oneEntry(SPORT, 'the flow after the restart');
      const r = await flow;
      if (restartEnded >= r.timing.totalMs) fail(`the flow (${r.timing.totalMs} ms) ended before the restart did (${restartEnded} ms): no evidence`);
      // Same id and the same creation time: the id alone is no proof (the kernel derives it from the
      // original tuple and the entry's address, which a re-created entry may get again); delta-time
      // counts whole seconds, hence the slack, well below ENTRY_AGE_MS.
      if (after.id !== before.id || Math.abs(after.createdMs - before.createdMs) > CREATED_SLACK_MS) {
        fail(`the restart re-created the flow's entry:\nbefore: ${before.line}\nafter:  ${after.line}`);
      }
      const pod = podName(before.endpoint);
      if (after.endpoint !== before.endpoint) fail(`the flow moved from ${pod} to ${podName(after.endpoint)}`);
      // Every answer from the one endpoint; a loaded test machine may time out a stray datagram (500 ms),
      // which the flow survives, so up to 1 % unanswered is tolerated, never a refusal.
      if (Object.keys(r.byPod).length !== 1 || !r.byPod[pod]) fail(`every answer must come from ${pod}: ${describeProbe(r)}`);
      if (r.failed > r.count / 100 || Object.keys(r.errors).some((e) => e !== 'TIMEOUT')) fail(`datagrams lost across the restart: ${describeProbe(r)}`);
      if (!/Reconciled UDP conntrack entries.*staleGroups.?.?0\b/.test(lastOnce)) {
        fail(`the restart did not log a reconciliation that found nothing stale:\n${lastOnce.slice(-3000)}`);
      }
      timings[`${mode} flow`] = `${r.ok}/${r.count} datagrams answered by ${pod}, restart ended at ${restartEnded} ms of ${r.timing.totalMs} ms`;
    }));

  it('an endpoint removed across the restart: its flow entry is deleted and the flow moves to the other pod', () =>
    runner.check(`${mode}-endpoint-gone`, async () => {
      const SPORT = 42_000;
      const started = Date.now();
      const flow = longFlow(SPORT);
      flow.catch(() => undefined); // awaited below; a failed check must not leave it unhandled
      const before = await oneEntry(SPORT, 'the flow to be tracked');
      await idle(ENTRY_AGE_MS);
      const gone = podName(before.endpoint);
      const other = gone === 'pod1' ? 'pod2' : 'pod1';
      writeDns([other === 'pod1' ? 1 : 2]);
      timings['restart --once (endpoint removed)'] = await once('restart without the endpoint');
      const restartEnded = Date.now() - started;
      // The next datagram after the deletion creates a new entry, DNATed to the remaining endpoint.
      const after = await waitFor(
        `the flow to be re-created towards ${other}`,
        async () => {
          const e = await flowEntries(SPORT);
          return e.length === 1 && e[0]?.endpoint !== before.endpoint ? e[0] : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      ).catch(async () => fail(`the entry to ${gone} stayed:\n${(await flowEntries(SPORT)).map((e) => e.line).join('\n')}`));
      if (after.createdMs - before.createdMs < ENTRY_AGE_MS - CREATED_SLACK_MS) fail(`the entry was not re-created: ${after.line}`);
      const r = await flow;
      if (restartEnded >= r.timing.totalMs) fail(`the flow ended before the restart did: no evidence`);
      // Answers in order (a datagram in flight at the deletion may go unanswered: errors are not answers).
      const order = r.tries.flatMap((t) => (t.pod ? [t.pod] : []));
      const firstOther = order.indexOf(other);
      if (firstOther < 0) fail(`the flow never reached ${other}: ${describeProbe(r)}`);
      if (order.slice(firstOther).some((p) => p === gone)) fail(`${gone} answered after the flow had moved: ${describeProbe(r)}`);
      if (order.slice(0, firstOther).some((p) => p !== gone)) fail(`before the move only ${gone} may answer: ${order.slice(0, firstOther).join(' ')}`);
      timings[`${mode} move`] = `${firstOther} answers from ${gone}, then ${order.length - firstOther} from ${other}; ${r.failed} unanswered`;
      writeDns([1, 2]);
    }));
});
