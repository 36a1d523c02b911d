/**
 * Real-kernel e2e of issue 23 item 5a (upstream issue #122740): a proxy restart keeps the UDP conntrack
 * entries of services whose endpoints did not change, and still clears the entry of a flow whose
 * endpoint went away while the proxy was down.
 *
 * For iptables and nftables mode, each on its own simulated node (libs/testing/netns): a long UDP flow
 * (one datagram every 20 ms from a fixed source port of pod3 to the `dns` ClusterIP; the echo servers
 * on pod1/pod2 answer with their name) runs while `bin/kube-proxy --once` runs again over the rules of
 * an earlier `--once` (a restart), and stops a moment after the restart (probe.mjs's stop file). The
 * node's conntrack table (timestamps on, in the node namespace only) shows the flow's entry before and
 * after: same id, same creation time (the kernel's, in nanoseconds), same endpoint; and every datagram
 * of the flow was answered by that one endpoint. Then the flow's endpoint is removed from the
 * EndpointSlice and the proxy restarted: the entry is deleted and the flow moves to the other pod.
 *
 * Every wait is bounded; the flows are bounded in count and time by probe.mjs.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * The flow: one datagram every FLOW_INTERVAL_MS until the check stops it (a moment after the restart),
 * at most FLOW_MAX_COUNT datagrams / FLOW_MAX_MS whatever happens.
 */
const FLOW_INTERVAL_MS = 20;
const FLOW_MAX_COUNT = 4000;
const FLOW_MAX_MS = 120_000;
/** How long the flow goes on after the restart: answers after it ended (10 datagrams). */
const FLOW_TAIL_MS = 10 * FLOW_INTERVAL_MS;
const ONCE_TIMEOUT_MS = 120_000;

/** One conntrack entry of the flow, as `conntrack -L -o xml,ktimestamp,id` prints it. */
interface FlowEntry {
  readonly line: string;
  readonly id: string;
  /**
   * When the kernel created the entry (ns since epoch, exact): an entry re-created by the restart,
   * however soon, has another one. (`delta-time` counts whole seconds and needed the entry aged first.)
   */
  readonly startNs: bigint | undefined;
  /** The reply source: the endpoint the flow is DNATed to. */
  readonly endpoint: string;
}

/** A flow in progress: stop() ends it before its next datagram and returns its summary. */
interface Flow {
  stop(): Promise<ProbeResult>;
}

/** Parses the `<flow>` elements of `conntrack -L -o xml,ktimestamp,id`. */
function parseFlows(xml: string): FlowEntry[] {
  return [...xml.matchAll(/<flow>(.*?)<\/flow>/gs)].map(([line, body = '']) => {
    const start = /<timestamp><start>(\d+)<\/start>/.exec(body)?.[1];
    const id = /<id>(\d+)<\/id>/.exec(body)?.[1] ?? '';
    const endpoint = /<meta direction="reply"><layer3[^>]*><src>([^<]+)<\/src>/.exec(body)?.[1] ?? '';
    return {
      // What the messages show; the full element only when a field is missing.
      line: id && start && endpoint ? `id=${id} start=${start}ns endpoint=${endpoint}` : line,
      id,
      startNs: start === undefined ? undefined : BigInt(start),
      endpoint,
    };
  });
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
    const r = await conntrack(n(), n().ns.node, ['-L', '-p', 'udp', '-f', 'ipv4', '--orig-dst', SVC.dns.ip, '--sport', String(sport), '-o', 'xml,ktimestamp,id']);
    return parseFlows(r.stdout);
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
      { timeoutMs: 10_000, intervalMs: 50 },
    ).catch(() => fail(`${what}: want one conntrack entry, have ${last.length}:\n${last.map((e) => e.line).join('\n')}`));
  }

  /**
   * A long flow (longFlow) started now, with the clock the restart is timed on: `flowEnd` is when the
   * flow ended, in ms since `started`; restartWithinFlow fails unless the restart ended before the flow did.
   */
  function timedFlow(sport: number): {
    started: number;
    flow: Flow;
    flowEnd: (fr: ProbeResult) => number;
    restartWithinFlow: (fr: ProbeResult, restartEnded: number) => void;
  } {
    const started = Date.now();
    const flow = longFlow(sport);
    const flowEnd = (fr: ProbeResult): number => fr.timing.startedAtMs + fr.timing.totalMs - started;
    const restartWithinFlow = (fr: ProbeResult, restartEnded: number): void => {
      if (restartEnded >= flowEnd(fr)) fail(`the flow ended (at ${flowEnd(fr)} ms) before the restart did (${restartEnded} ms): no evidence`);
    };
    return { started, flow, flowEnd, restartWithinFlow };
  }

  /** A long flow from pod3's `sport`, until stop() (bounded by probe.mjs in count and time). */
  function longFlow(sport: number): Flow {
    const pod3 = n().ns.pods[2] ?? fail('no pod3');
    const stopFile = join(dir, `stop-flow-${sport}`);
    rmSync(stopFile, { force: true });
    const done = probe(n(), pod3, {
      proto: 'udp',
      host: SVC.dns.ip,
      port: SVC.dns.port,
      sport,
      count: FLOW_MAX_COUNT,
      intervalMs: FLOW_INTERVAL_MS,
      timeoutMs: 500,
      maxTotalMs: FLOW_MAX_MS,
      stopFile,
    });
    done.catch(() => undefined); // awaited by stop(); a failed check must not leave it unhandled
    return {
      stop: () => {
        writeFileSync(stopFile, '');
        return done;
      },
    };
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
      const { started, flow, flowEnd, restartWithinFlow } = timedFlow(SPORT);
      let r: ProbeResult | undefined;
      let restartEnded = 0;
      let before: FlowEntry;
      let after: FlowEntry;
      try {
        before = await oneEntry(SPORT, 'the flow to be tracked');
        if (before.id === '' || before.startNs === undefined) fail(`no id or start timestamp in the entry: ${before.line}`);
        timings['restart --once'] = await once('restart');
        restartEnded = Date.now() - started;
        after = await oneEntry(SPORT, 'the flow after the restart');
        await idle(FLOW_TAIL_MS);
      } finally {
        r = await flow.stop();
      }
      restartWithinFlow(r, restartEnded);
      // Same id and the same creation time: the id alone is no proof (the kernel derives it from the
      // original tuple and the entry's address, which a re-created entry may get again); the start time
      // is the kernel's own, in nanoseconds, so a re-created entry has another one however soon it came.
      if (after.id !== before.id || after.startNs !== before.startNs) {
        fail(`the restart re-created the flow's entry:\nbefore: ${before.line}\nafter:  ${after.line}`);
      }
      const pod = podName(before.endpoint);
      if (after.endpoint !== before.endpoint) fail(`the flow moved from ${pod} to ${podName(after.endpoint)}`);
      // Every answer from the one endpoint; a loaded test machine may time out a stray datagram (500 ms),
      // which the flow survives, so up to 1 % unanswered (at least one: the flow is short) is tolerated,
      // never a refusal.
      if (Object.keys(r.byPod).length !== 1 || !r.byPod[pod]) fail(`every answer must come from ${pod}: ${describeProbe(r)}`);
      if (r.failed > Math.max(1, r.count / 100) || Object.keys(r.errors).some((e) => e !== 'TIMEOUT')) fail(`datagrams lost across the restart: ${describeProbe(r)}`);
      if (!/Reconciled UDP conntrack entries.*staleGroups.?.?0\b/.test(lastOnce)) {
        fail(`the restart did not log a reconciliation that found nothing stale:\n${lastOnce.slice(-3000)}`);
      }
      timings[`${mode} flow`] = `${r.ok}/${r.count} datagrams answered by ${pod}, restart ended at ${restartEnded} ms of ${flowEnd(r)} ms`;
    }));

  it('an endpoint removed across the restart: its flow entry is deleted and the flow moves to the other pod', () =>
    runner.check(`${mode}-endpoint-gone`, async () => {
      const SPORT = 42_000;
      const { started, flow, restartWithinFlow } = timedFlow(SPORT);
      let r: ProbeResult | undefined;
      let restartStartedMs = 0;
      let restartEnded = 0;
      let before: FlowEntry;
      let after: FlowEntry;
      let gone = '';
      let other = '';
      try {
        before = await oneEntry(SPORT, 'the flow to be tracked');
        if (before.startNs === undefined) fail(`no start timestamp in the entry: ${before.line}`);
        gone = podName(before.endpoint);
        other = gone === 'pod1' ? 'pod2' : 'pod1';
        writeDns([other === 'pod1' ? 1 : 2]);
        restartStartedMs = Date.now();
        timings['restart --once (endpoint removed)'] = await once('restart without the endpoint');
        restartEnded = Date.now() - started;
        // The next datagram after the deletion creates a new entry, DNATed to the remaining endpoint.
        const old = before;
        after = await waitFor(
          `the flow to be re-created towards ${other}`,
          async () => {
            const e = await flowEntries(SPORT);
            return e.length === 1 && e[0]?.endpoint !== old.endpoint ? e[0] : undefined;
          },
          { timeoutMs: 10_000, intervalMs: 50 },
        ).catch(async () => fail(`the entry to ${gone} stayed:\n${(await flowEntries(SPORT)).map((e) => e.line).join('\n')}`));
        await idle(FLOW_TAIL_MS);
      } finally {
        r = await flow.stop();
      }
      // Re-created, not rewritten: the new entry's kernel start time is after the restart began.
      if (after.startNs === undefined || after.startNs < BigInt(restartStartedMs) * 1_000_000n) {
        fail(`the entry was not re-created by the restart (started ${restartStartedMs} ms): ${after.line}`);
      }
      restartWithinFlow(r, restartEnded);
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
