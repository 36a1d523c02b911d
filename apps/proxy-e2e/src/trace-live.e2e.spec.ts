/**
 * Issue 22 on the real kernel: `bin/kube-proxy trace --live -o json`, run inside a simulated node's
 * namespace, predicts where a packet goes, and real TCP/UDP packets confirm it (support/trace-checks.ts:
 * every endpoint that answers is in the trace's set and, without affinity, all of them answer; the
 * source the endpoint sees matches the trace's masquerade; REJECT is a refused connection, DROP a
 * timeout).
 *
 * - Our rules (tags kptl / kptf: iptables-legacy and nftables): the datapath
 *   scenario (support/scenario.ts) programmed by `bin/kube-proxy --once --manifests=<tmp>`; the trace
 *   detects the mode from the kernel.
 * - Upstream's rules (tags kpul / kpun / kpuf): the expected iptables-save and nft dumps of upstream's
 *   TestOverallIPTablesRules / TestOverallNFTablesRules (fixtures/upstream-trace), loaded with
 *   iptables-{legacy,nft}-restore and `nft -f` into a node shaped to them (support/upstream-rules-node.ts).
 * - Bad input (tag kptb): a namespace without kube-proxy rules and malformed `--to` values exit 1 with
 *   a message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PacketTrace, TraceProtocol } from '@kube-proxy/core';
import {
  cleanupStaleRuns,
  createSimulatedNode,
  iptables,
  iptablesCommand,
  runPrefix,
  startEchoServer,
  type CommandResult,
  type EchoServer,
  type IptablesVariant,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { fail } from './support/probe-assertions.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { nftRuleset } from './support/nft-tables.js';
import { proxyArgs, runProxyOnce } from './support/proxy.js';
import { POD_TCP_PORT, POD_UDP_PORT, SVC, writeInitialManifests } from './support/scenario.js';
import { runTraceCommand, traceArgs } from './support/trace-cli.js';
import { confirmWithTraffic, namespaceAddresses, traceCases, type NodeCase, type TraceCase, type TraceCheckContext } from './support/trace-checks.js';
import { OUR_CASES, podIP } from './support/trace-our-cases.js';
import {
  UPSTREAM_ENDPOINT_PORT,
  createUpstreamShapedNode,
  loadUpstreamIptables,
  loadUpstreamNftables,
  upstreamCases,
  upstreamEndpointIP,
} from './support/upstream-rules-node.js';

const pre = await e2ePreflight('trace --live');
const describeNetns = pre.run ? describe : describe.skip;

const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
const ONCE_TIMEOUT_MS = 90_000;

interface ModeRun {
  readonly label: string;
  readonly mode: 'iptables' | 'nftables';
  readonly variant?: IptablesVariant;
  readonly tag: string;
}

/** A case of the tables below placed on `node`: its connections come from the client, pod3 or the node. */
const placed = (node: SimulatedNode, k: NodeCase): TraceCase => ({
  ...k,
  fromNs: k.origin === 'client' ? node.ns.client : k.origin === 'node' ? node.ns.node : (node.ns.pods[2] ?? fail('no pod3')),
});

/** The trace of case `name` taken in beforeAll (or the reason there is none). */
function traceOf(traces: ReadonlyMap<string, PacketTrace | Error> | undefined, name: string): PacketTrace {
  const t = traces?.get(name) ?? fail('no trace was taken (see the beforeAll error)');
  if (t instanceof Error) throw t;
  return t;
}

const podNumber = (pod: string): number => Number(/^pod(\d)$/.exec(pod)?.[1] ?? fail(`not a pod name: ${pod}`));

/** The namespace's rules as text, for failure reports: iptables-save of the variant, or the nft ruleset. */
async function rulesDump(node: SimulatedNode, run: ModeRun): Promise<string> {
  if (run.mode === 'nftables') return nftRuleset(node, node.ns.node);
  const r = await node.exec(node.ns.node, iptablesCommand(run.variant!, 'iptables-save'), [], { allowFailure: true });
  return r.code === 0 ? r.stdout : `iptables-save failed: ${r.stderr}`;
}

/** A fresh temp dir, with the legacy variant's own xtables lock file in `env`. */
function runDir(label: string, run: ModeRun, env: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), `kp-e2e-trace-${label}-`));
  if (run.variant === 'legacy') env['XTABLES_LOCKFILE'] = join(dir, 'xtables.lock');
  return dir;
}

/*
 * Our rules in iptables-legacy and nftables. The iptables-nft variant holds the same rules and is read by
 * the same tracer (only the save command differs): upstream's dump below covers it, and leaving our run
 * out keeps ~25 s (eleven CLI starts and a --once) out of the CI budget.
 */
const OUR_RUNS: readonly ModeRun[] = [
  { label: 'iptables-legacy', mode: 'iptables', variant: 'legacy', tag: 'kptl' },
  { label: 'nftables', mode: 'nftables', tag: 'kptf' },
];

describeNetns.each(OUR_RUNS)('trace --live over the rules bin/kube-proxy --once programs ($label)', (run) => {
  let node: SimulatedNode | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  let once: CommandResult | undefined;
  let ctx: TraceCheckContext | undefined;
  let traces: Map<string, PacketTrace | Error> | undefined;
  const env: Record<string, string> = {};
  const c = (): TraceCheckContext => ctx ?? fail('the node was not programmed (see the beforeAll error)');

  beforeAll(async () => {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    dir = runDir('ours', run, env);
    await cleanupStaleRuns(run.tag);
    const nd = await createSimulatedNode({ prefix: runPrefix(run.tag), clientExtraAddresses: [`${SVC.lb.deniedSource}/24`], env });
    node = nd;
    servers = await Promise.all(nd.pods.map((p) => startEchoServer(nd, p.ns, { tcpPorts: [POD_TCP_PORT], udpPorts: [POD_UDP_PORT], maxLifetimeS: 300 })));
    const manifests = join(dir, 'manifests');
    writeInitialManifests(manifests, nd);
    // kubelet's hint chain tells an iptables-mode proxy which variant the node uses.
    if (run.variant) await iptables(nd, nd.ns.node, run.variant, ['-t', 'mangle', '-N', HINT_CHAIN]);
    once = await runProxyOnce(nd, proxyArgs({ manifestsDir: manifests, mode: run.mode, extra: ['--once'] }), { env, timeoutMs: ONCE_TIMEOUT_MS });
    if (once.code !== 0) return;
    ctx = {
      node: nd,
      nodeAddresses: await namespaceAddresses(nd, nd.ns.node),
      endpointOf: (pod: string, protocol: TraceProtocol) => `${podIP(podNumber(pod))}:${protocol === 'UDP' ? POD_UDP_PORT : POD_TCP_PORT}`,
      env,
      dumpRules: () => rulesDump(nd, run),
    };
    // Every trace before any traffic: what the kernel held as the proxy left it.
    traces = await traceCases(ctx, OUR_CASES.map((k) => placed(nd, k)));
  }, ONCE_TIMEOUT_MS + 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('the proxy programmed the node (--once exits 0)', () => {
    const r = once ?? fail('the proxy did not run');
    if (r.code !== 0) fail(`--proxy-mode=${run.mode} --once exited ${String(r.code)}:\n${r.stderr.slice(-4000)}`);
  });

  it.each(OUR_CASES.map((k) => [k.name, k] as const))('%s', async (name, k) => {
    await confirmWithTraffic(c(), placed(c().node, k), traceOf(traces, name));
  });
});

const UPSTREAM_RUNS: readonly ModeRun[] = [
  { label: 'iptables-legacy', mode: 'iptables', variant: 'legacy', tag: 'kpul' },
  { label: 'iptables-nft', mode: 'iptables', variant: 'nft', tag: 'kpun' },
  { label: 'nftables', mode: 'nftables', tag: 'kpuf' },
];

describeNetns.each(UPSTREAM_RUNS)("trace --live over upstream's expected dump ($label)", (run) => {
  let node: SimulatedNode | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  let ctx: TraceCheckContext | undefined;
  let traces: Map<string, PacketTrace | Error> | undefined;
  const env: Record<string, string> = {};
  const cases = upstreamCases(run.mode);
  const c = (): TraceCheckContext => ctx ?? fail('the node was not built (see the beforeAll error)');

  beforeAll(async () => {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    dir = runDir('upstream', run, env);
    await cleanupStaleRuns(run.tag);
    const nd = await createUpstreamShapedNode(runPrefix(run.tag), env);
    node = nd;
    servers = await Promise.all(nd.pods.map((p) => startEchoServer(nd, p.ns, { tcpPorts: [UPSTREAM_ENDPOINT_PORT], maxLifetimeS: 300 })));
    if (run.mode === 'nftables') await loadUpstreamNftables(nd);
    else await loadUpstreamIptables(nd, run.variant!);
    ctx = {
      node: nd,
      nodeAddresses: await namespaceAddresses(nd, nd.ns.node),
      endpointOf: (pod: string) => `${upstreamEndpointIP(podNumber(pod))}:${UPSTREAM_ENDPOINT_PORT}`,
      env,
      dumpRules: () => rulesDump(nd, run),
    };
    traces = await traceCases(ctx, cases.map((k) => placed(nd, k)));
  }, 150_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it.each(cases.map((k) => [k.name, k] as const))('%s', async (name, k) => {
    await confirmWithTraffic(c(), placed(c().node, k), traceOf(traces, name));
  });
});

describeNetns('trace --live: bad input exits 1 and says why', () => {
  let node: SimulatedNode | undefined;
  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const trace = (to: string): Promise<CommandResult> => runTraceCommand(n(), n().ns.node, traceArgs({ from: '192.168.50.2', to }));

  beforeAll(async () => {
    await cleanupStaleRuns('kptb');
    node = await createSimulatedNode({ prefix: runPrefix('kptb'), podCount: 1 });
  }, 60_000);

  afterAll(async () => {
    await node?.destroy();
  }, 30_000);

  it('a node without kube-proxy rules: exit 1, naming what was looked for, no JSON on stdout', async () => {
    const r = await trace(`${SVC.web.ip}:${SVC.web.port}`);
    if (r.code !== 1) fail(`want exit 1, got ${String(r.code)}:\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    // What was looked for, by name: the nftables table and the iptables entry chain.
    expect(r.stderr).toMatch(/looked for/);
    expect(r.stderr).toMatch(/table ip kube-proxy/);
    expect(r.stderr).toMatch(/KUBE-SERVICES/);
    expect(r.stdout.trim()).toBe('');
  });

  it.each(['10.96.0.300:80', '10.96.0.10', '[fd00::1]:99999'])('a malformed --to=%s: exit 1 and a message naming --to', async (to) => {
    const r = await trace(to);
    if (r.code !== 1) fail(`want exit 1, got ${String(r.code)}:\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    expect(r.stderr).toMatch(/--to/);
  });
});
