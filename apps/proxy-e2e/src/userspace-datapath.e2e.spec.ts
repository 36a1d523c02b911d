/**
 * Real-kernel e2e of the userspace backend: `bin/kube-proxy --proxy-mode=userspace` runs inside the node
 * namespace of a simulated node (libs/testing/netns, docs/datapath-testing.md). For every service port it opens a
 * proxy socket on a port of --proxy-port-range and captures the service's addresses with iptables-nft
 * rules (nat KUBE-PORTALS-CONTAINER/-HOST, KUBE-NODEPORT-CONTAINER/-HOST, filter KUBE-NODEPORT-NON-LOCAL);
 * the connections to the endpoints are made by the proxy process from the node. Real TCP/UDP traffic
 * from pods, the node itself and an off-cluster client checks the datapath.
 *
 * Conventions as in the iptables suite: every probe try and wait is bounded; round robin is checked
 * with tolerant windows (exact round robin over n endpoints gives count/n each; the windows accept
 * ±50 %); an endpoint's absence is polled with enough tries that a still-present endpoint cannot be
 * missed (round robin hits each of n endpoints once in n consecutive tries).
 * The pods see the node (10.244.1.1, its address on the pod bridge) as the source: no client IP
 * preservation in userspace mode.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
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
  sleep,
  startEchoServer,
  waitFor,
  type EchoServer,
  type ProbeOptions,
  type ProbeResult,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { allOk, fail, hitsAll, onlyPods, onlySources, pollProbe, within } from './support/probe-assertions.js';
import { CheckRunner } from './support/check-runner.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { KUBE_PROXY_BIN, PROXY_MAIN_JS, proxyArgs, runProxyOnce, startProxy, type RunningProxy } from './support/proxy.js';
import { POD_TCP_PORT, POD_UDP_PORT } from './support/scenario.js';
import {
  STREAM_POD_PORT,
  STREAM_PODS,
  USERSPACE_SERVICES,
  USVC,
  captureRules,
  expectedProxyPorts,
  listeningPorts,
  missingJumps,
  removeUserspaceService,
  rulesForDestination,
  writeUserspaceManifests,
  writeUserspaceSlice,
  type UserspaceService,
} from './support/userspace-scenario.js';
import { startStreamServer, startTransfer } from './support/userspace-stream.js';

const pre = await e2ePreflight('userspace datapath');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpus';
const VARIANT = 'nft' as const;
/** kubelet's chain: pins the proxy to iptables-nft. */
const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
const PORT_RANGE = { first: 20000, last: 20049 } as const;
const UDP_TIMEOUT_MS = 250;
/** Proxy ports are allocated per protocol (see expectedProxyPorts). */
const PER_PROTOCOL_PORTS = true;
/**
 * Per-try timeout of probes that should succeed. Longer than the iptables suite's: every answer here
 * passes through the proxy process, which a busy 2-vCPU machine can stall for a second or more.
 * Probes still give up after 3 failed tries.
 */
const TRY_TIMEOUT_MS = 2000;
/** Manifest change → the proxy's sync → visible in traffic. The sync period is 2 s, min-sync 0. */
const CHANGE_BOUND_MS = 10_000;
const CHAINS = {
  portalsContainer: 'KUBE-PORTALS-CONTAINER',
  portalsHost: 'KUBE-PORTALS-HOST',
  nodePortContainer: 'KUBE-NODEPORT-CONTAINER',
  nodePortHost: 'KUBE-NODEPORT-HOST',
  nonLocal: 'KUBE-NODEPORT-NON-LOCAL',
} as const;
const USERSPACE_CHAIN_RE = /^KUBE-(PORTALS|NODEPORT)-/;

const podName = (i: number): string => `pod${i}`;
/** CPU pressure of the machine (stalls of the proxy process under load explain slow or timed-out tries). */
function cpuPressure(): string {
  try {
    return `cpu pressure ${readFileSync('/proc/pressure/cpu', 'utf8').split('\n')[0]}`;
  } catch {
    return `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`;
  }
}
function tryList(r: ProbeResult): string {
  return r.tries.map((t) => `${t.pod ?? t.error}@${Math.round(t.ms)}ms`).join(' ');
}

describeNetns('userspace datapath through bin/kube-proxy --proxy-mode=userspace (iptables-nft capture rules)', () => {
  let node: SimulatedNode | undefined;
  let proxy: RunningProxy | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  let manifests = '';
  /** Service key → proxy port, as read from the capture rules once the proxy synced. */
  const proxyPorts = new Map<string, number>();

  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const pod = (i: number): string => n().ns.pods[i - 1] ?? fail(`no pod${i}`);
  const p = (ns: string, o: ProbeOptions): Promise<ProbeResult> => probe(n(), ns, { stopAfterErrors: 3, timeoutMs: TRY_TIMEOUT_MS, ...o });
  const portOf = (s: UserspaceService): number => proxyPorts.get(s.key) ?? fail(`no proxy port known for ${s.key}`);
  const nat = (): Promise<string> => iptablesSave(n(), n().ns.node, VARIANT, 'nat');
  const ss = async (): Promise<string> => (await n().exec(n().ns.node, 'ss', ['-H', '-l', '-n', '-t', '-u'])).stdout;

  async function diagnostics(): Promise<string> {
    const nd = node;
    if (!nd) return '(no topology)';
    const save = await iptablesSave(nd, nd.ns.node, VARIANT).catch((e: Error) => `iptables-${VARIANT}-save failed: ${e.message}`);
    const sockets = await nd.exec(nd.ns.node, 'ss', ['-l', '-n', '-t', '-u', '-p'], { allowFailure: true }).then(
      (r) => r.stdout,
      (e: Error) => e.message,
    );
    const ct = await conntrack(nd, nd.ns.node, ['-L']).then(
      (r) => r.stdout,
      (e: Error) => e.message,
    );
    return (
      `=== ${cpuPressure()}\n` +
      `=== ip netns exec ${nd.ns.node} iptables-${VARIANT}-save\n${save}\n` +
      `=== ss -lntup (node)\n${sockets}\n` +
      `=== conntrack -L (node)\n${ct}\n` +
      `=== proxy log (last 80 lines; full log in ${join(dir, 'proxy.log')})\n${proxy ? proxy.tail(80) : '(proxy not started)'}\n`
    );
  }

  const runner = new CheckRunner({ dir: () => dir, diagnostics, proxy: () => proxy });
  const timings = runner.timings;
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);

  /** Polls `count` TCP tries from `ns` until `done` holds, bounded by `timeoutMs`. */
  async function until(
    what: string,
    ns: string,
    target: { host: string; port: number },
    count: number,
    done: (r: ProbeResult) => boolean,
    timeoutMs = CHANGE_BOUND_MS,
  ): Promise<ProbeResult> {
    return pollProbe(what, () => p(ns, { ...target, count, stopAfterErrors: 1 }), done, timeoutMs);
  }

  beforeAll(() => runner.setup(setup), 150_000);

  async function setup(): Promise<void> {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    const started = Date.now();
    dir = mkdtempSync(join(tmpdir(), 'kp-e2e-userspace-'));
    manifests = join(dir, 'manifests');
    await cleanupStaleRuns(TAG);
    node = await createSimulatedNode({ prefix: runPrefix(TAG) });
    servers = await Promise.all([
      ...n().pods.map((pd) => startEchoServer(n(), pd.ns, { tcpPorts: [POD_TCP_PORT], udpPorts: [POD_UDP_PORT], maxLifetimeS: 600 })),
      ...STREAM_PODS.map((i) => startStreamServer(n(), pod(i), { port: STREAM_POD_PORT, maxLifetimeS: 600 })),
    ]);
    writeUserspaceManifests(manifests, n());
    await iptables(n(), n().ns.node, VARIANT, ['-t', 'mangle', '-N', HINT_CHAIN]);
    timings['setup (netns + servers)'] = Date.now() - started;

    const t0 = Date.now();
    proxy = startProxy(
      n(),
      proxyArgs({
        mode: 'userspace',
        manifestsDir: manifests,
        extra: [`--proxy-port-range=${PORT_RANGE.first}-${PORT_RANGE.last}`, `--udp-timeout=${UDP_TIMEOUT_MS}ms`],
      }),
      { logFile: join(dir, 'proxy.log') },
    );
    // Ready = every service port's cluster IP is captured (REDIRECT to its proxy port) and the built-in
    // chains jump to the capture chains (the backend ensures the jumps after restoring the chains).
    await waitFor(
      'the proxy to capture every service',
      async () => {
        if (proxy?.exited()) fail(`kube-proxy exited with ${proxy.exitCode()}:\n${proxy.tail(60)}`);
        const dump = await iptablesSave(n(), n().ns.node, VARIANT);
        if (missingJumps(dump).length > 0) return undefined;
        const found = new Map<string, number>();
        for (const s of USERSPACE_SERVICES) {
          const port = captureRules(dump, CHAINS.portalsContainer, { proto: s.proto, dport: s.port, dst: s.ip }).find((r) => r.toPort)?.toPort;
          if (port === undefined) return undefined;
          found.set(s.key, port);
        }
        for (const [k, v] of found) proxyPorts.set(k, v);
        return true;
      },
      { timeoutMs: existsSync(PROXY_MAIN_JS) ? 30_000 : 120_000, intervalMs: 200 },
    );
    timings['proxy start → all services captured'] = Date.now() - t0;
  }

  afterAll(async () => {
    const stop = proxy ? await proxy.stop() : undefined;
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    console.log(runner.summary('userspace (iptables-nft) e2e timings (ms)', `\n  proxy stop: ${JSON.stringify(stop)}\n  ${cpuPressure()}`));
    if (dir && runner.failures === 0) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('installs the capture chains in iptables-nft (jumped from PREROUTING/OUTPUT/INPUT) and a rule set per service port', () =>
    check('capture-rules', async () => {
      const nd = n();
      const dump = await iptablesSave(nd, nd.ns.node, VARIANT);
      const mine = kubeChains(dump);
      for (const c of ['nat/KUBE-PORTALS-CONTAINER', 'nat/KUBE-PORTALS-HOST', 'nat/KUBE-NODEPORT-CONTAINER', 'nat/KUBE-NODEPORT-HOST', 'filter/KUBE-NODEPORT-NON-LOCAL']) {
        if (!mine.includes(c)) fail(`no ${c} in iptables-${VARIANT}-save (have: ${mine.join(' ') || 'none'})`);
      }
      const noJump = missingJumps(dump);
      if (noJump.length > 0) fail(`missing jumps: ${noJump.join(', ')}`);
      const legacy = kubeChains(await iptablesSave(nd, nd.ns.node, 'legacy'));
      if (legacy.length > 0) fail(`the proxy also wrote iptables-legacy: ${legacy.join(' ')}`);

      const problems: string[] = [];
      const expect1 = (what: string, rules: ReturnType<typeof captureRules>, target: string, port: number, addr?: string): void => {
        const good = rules.filter((r) => r.target === target && r.toPort === port && (addr === undefined || r.toAddr === addr));
        if (good.length === 0) problems.push(`${what}: want ${target} to ${addr ? `${addr}:` : ''}${port}, found ${rules.map((r) => r.line).join(' | ') || 'no rule'}`);
      };
      for (const s of USERSPACE_SERVICES) {
        const port = portOf(s);
        for (const ip of [s.ip, ...s.extraIPs]) {
          expect1(`${s.key} ${CHAINS.portalsContainer} ${ip}`, captureRules(dump, CHAINS.portalsContainer, { proto: s.proto, dport: s.port, dst: ip }), 'REDIRECT', port);
        }
        expect1(`${s.key} ${CHAINS.portalsHost} ${s.ip}`, captureRules(dump, CHAINS.portalsHost, { proto: s.proto, dport: s.port, dst: s.ip }), 'DNAT', port, nd.nodeIp);
        if (s.nodePort !== undefined) {
          expect1(`${s.key} ${CHAINS.nodePortContainer}`, captureRules(dump, CHAINS.nodePortContainer, { proto: s.proto, dport: s.nodePort }), 'REDIRECT', port);
          expect1(`${s.key} ${CHAINS.nodePortHost}`, captureRules(dump, CHAINS.nodePortHost, { proto: s.proto, dport: s.nodePort }), 'DNAT', port, nd.nodeIp);
          const accept = captureRules(dump, CHAINS.nonLocal, { proto: s.proto, dport: port });
          if (!accept.some((r) => r.target === 'ACCEPT')) problems.push(`${s.key} ${CHAINS.nonLocal}: no ACCEPT of proxy port ${port}`);
        }
      }
      if (problems.length > 0) fail(`capture rules wrong:\n  ${problems.join('\n  ')}`);
    }));

  it('allocates proxy ports from --proxy-port-range (lowest first, in sorted service-port order), listens on them and logs them', () =>
    check('proxy-ports', async () => {
      const got = [...proxyPorts.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
      const fmt = (e: Iterable<[string, number]>): string => [...e].map(([k, v]) => `${k}=${v}`).join(' ');
      timings['proxy ports'] = fmt(got);
      const outside = got.filter(([, v]) => v < PORT_RANGE.first || v > PORT_RANGE.last);
      if (outside.length > 0) fail(`proxy ports outside ${PORT_RANGE.first}-${PORT_RANGE.last}: ${fmt(outside)}`);
      const listening = listeningPorts(await ss());
      const missing = USERSPACE_SERVICES.filter((s) => !listening.has(`${s.proto}/${portOf(s)}`)).map((s) => `${s.proto}/${portOf(s)} (${s.key})`);
      if (missing.length > 0) fail(`no socket on ${missing.join(', ')}; sockets: ${[...listening].sort().join(' ')}`);
      const opened = (proxy?.logs() ?? '').split('\n').filter((l) => l.includes('Opened proxy port'));
      const unlogged = USERSPACE_SERVICES.filter((s) => !opened.some((l) => new RegExp(`\\b${portOf(s)}\\b`).test(l))).map((s) => `${portOf(s)} (${s.key})`);
      if (unlogged.length > 0) fail(`no "Opened proxy port" log line for ${unlogged.join(', ')}; lines:\n${opened.join('\n') || '(none)'}`);
      // The backend allocates per protocol (a TCP and a UDP socket may share a number); upstream's
      // userspace proxier used one pool. Either way: lowest free first, in sorted key order.
      const want = expectedProxyPorts(PORT_RANGE.first, { perProtocol: PER_PROTOCOL_PORTS });
      if (got.some(([k, v]) => want.get(k) !== v)) {
        fail(`proxy ports differ from "lowest free ${PER_PROTOCOL_PORTS ? 'per-protocol ' : ''}port first, in sorted key order": got ${fmt(got)}; want ${fmt(want)}`);
      }
    }));

  it('1. ClusterIP TCP from a pod is proxied round robin over the three endpoints; pods see the node as source', () =>
    check('clusterip-tcp', async () => {
      const s = USVC.spread;
      const r = await p(pod(1), { host: s.ip, port: s.port, count: 60 });
      allOk(r, 'pod1 → spread');
      for (const pd of ['pod1', 'pod2', 'pod3']) within(r, pd, 10, 30);
      onlySources(r, [n().bridgeIp], 'pod1 → spread (the proxy connects from the node)');
    }));

  it('2. ClusterIP UDP from a pod and from the routed client: answered by the endpoints, replies come from the VIP; associations idle out after --udp-timeout', () =>
    check('clusterip-udp', async () => {
      const s = USVC.dns;
      // The probe's UDP socket is connected to VIP:port, so it only accepts replies from VIP:port:
      // every success proves conntrack rewrote the proxy socket's reply source back to the service.
      const a = await p(pod(3), { proto: 'udp', host: s.ip, port: s.port, count: 40 });
      allOk(a, 'pod3 → dns (UDP, a new socket per try)');
      within(a, 'pod1', 10, 30);
      within(a, 'pod2', 10, 30);
      onlySources(a, [n().bridgeIp], 'pod3 → dns (UDP)');
      const c = await p(n().ns.client, { proto: 'udp', host: s.ip, port: s.port, count: 20 });
      allOk(c, 'client → dns ClusterIP (UDP, routed via the node)');
      onlyPods(c, ['pod1', 'pod2'], 'client → dns (UDP)');
      hitsAll(c, ['pod1', 'pod2'], 'client → dns (UDP)');

      // One client flow (fixed source port) = one association: same endpoint, same proxy-side socket.
      const flow = { proto: 'udp' as const, host: s.ip, port: s.port, sport: 40_000, count: 3 };
      const assoc = (r: ProbeResult, what: string): string => {
        allOk(r, what);
        const keys = [...new Set(r.tries.map((t) => `${t.pod} ${t.source}:${t.sourcePort}`))];
        if (keys.length !== 1) fail(`${what}: one client flow must use one association (endpoint + proxy socket), got ${keys.join(', ')} (tries ${tryList(r)})`);
        return keys[0]!;
      };
      const first = assoc(await p(pod(3), flow), 'fixed-sport flow');
      await sleep(2000); // idle well beyond --udp-timeout
      const second = assoc(await p(pod(3), flow), 'fixed-sport flow after idling');
      timings['udp association before/after idle'] = `${first} / ${second}`;
      if (first.split(':')[1] === second.split(':')[1]) {
        fail(`the association survived 2 s of idleness (--udp-timeout=${UDP_TIMEOUT_MS}ms): the pod saw the same proxy socket ${first} before and after`);
      }
    }));

  it('3. NodePort TCP from the client to the node IP', () =>
    check('nodeport-from-client', async () => {
      const s = USVC.web;
      const r = await p(n().ns.client, { host: n().nodeIp, port: s.nodePort!, count: 40 });
      allOk(r, `client → ${n().nodeIp}:${s.nodePort}`);
      onlyPods(r, ['pod1', 'pod2'], 'client → NodePort');
      within(r, 'pod1', 10, 30);
      within(r, 'pod2', 10, 30);
      onlySources(r, [n().bridgeIp], 'client → NodePort (no client IP preservation)');
    }));

  it('external IPs and LoadBalancer ingress IPs from the client are captured too', () =>
    check('external-and-lb-ips', async () => {
      const e = await p(n().ns.client, { host: USVC.ext.extraIPs[0]!, port: USVC.ext.port, count: 10 });
      allOk(e, 'client → externalIP');
      onlyPods(e, ['pod3'], 'client → externalIP');
      const l = await p(n().ns.client, { host: USVC.lb.extraIPs[0]!, port: USVC.lb.port, count: 10 });
      allOk(l, 'client → LoadBalancer IP');
      onlyPods(l, ['pod1', 'pod2'], 'client → LoadBalancer IP');
      hitsAll(l, ['pod1', 'pod2'], 'client → LoadBalancer IP');
    }));

  it('4. ClusterIP TCP (and its own NodePort) from the node namespace itself: host traffic through OUTPUT', () =>
    check('host-clusterip', async () => {
      const s = USVC.web;
      const r = await p(n().ns.node, { host: s.ip, port: s.port, count: 20 });
      allOk(r, 'node → web ClusterIP');
      onlyPods(r, ['pod1', 'pod2'], 'node → web ClusterIP');
      hitsAll(r, ['pod1', 'pod2'], 'node → web ClusterIP');
      const np = await p(n().ns.node, { host: n().nodeIp, port: s.nodePort!, count: 10 });
      allOk(np, `node → own ${n().nodeIp}:${s.nodePort}`);
      onlyPods(np, ['pod1', 'pod2'], 'node → own NodePort');
    }));

  it('5. ClientIP session affinity: repeated connections from one client land on one pod', () =>
    check('affinity', async () => {
      const s = USVC.webAff;
      const picks: string[] = [];
      for (const [ns, what] of [
        [pod(3), 'pod3'],
        [pod(1), 'pod1'],
        [n().ns.client, 'client'],
        [n().ns.node, 'node'],
      ] as const) {
        const r = await p(ns, { host: s.ip, port: s.port, count: 15 });
        allOk(r, `${what} → web-aff`);
        const pods = Object.keys(r.byPod);
        if (pods.length !== 1) fail(`${what} → web-aff did not stick to one pod: ${describeProbe(r)}`);
        picks.push(`${what}→${pods[0]}`);
      }
      timings['affinity picks'] = picks.join(' ');
      // Without affinity the same 15 tries spread: the stickiness above is the service's, not an artefact.
      const ctl = await p(pod(3), { host: USVC.spread.ip, port: USVC.spread.port, count: 15 });
      allOk(ctl, 'pod3 → spread (control)');
      hitsAll(ctl, ['pod1', 'pod2', 'pod3'], 'pod3 → spread (control, no affinity)');
    }));

  it('a refused connect to one endpoint fails over to the next (every client connection succeeds)', () =>
    check('failover-refused', async () => {
      const s = USVC.failover;
      const r = await p(pod(1), { host: s.ip, port: s.port, count: 10 });
      allOk(r, `pod1 → failover (pod3:8090 refuses; tries ${tryList(r)})`);
      onlyPods(r, ['pod2'], 'pod1 → failover');
      timings['failover tries'] = tryList(r);
    }));

  it('6a. an endpoint removed from the EndpointSlice stops answering after a sync', () =>
    check('endpoint-removal', async () => {
      const s = USVC.spread;
      const t0 = Date.now();
      writeUserspaceSlice(manifests, n(), s, [1, 3]);
      // 6 tries over 3 round-robin endpoints hit pod2 twice while it is still an endpoint.
      await until('pod2 to leave spread', pod(1), { host: s.ip, port: s.port }, 6, (r) => r.ok === r.count && !r.byPod['pod2']);
      timings['endpoint removal latency'] = Date.now() - t0;
      const r = await p(pod(1), { host: s.ip, port: s.port, count: 30 });
      allOk(r, 'pod1 → spread after removing pod2');
      onlyPods(r, ['pod1', 'pod3'], 'pod1 → spread after removing pod2');
      hitsAll(r, ['pod1', 'pod3'], 'pod1 → spread after removing pod2');
    }));

  it('6b. a removed service: new connections to its ClusterIP fail (bounded), its capture rules go and its proxy port closes', () =>
    check('service-removal', async () => {
      const s = USVC.spread;
      const port = portOf(s);
      const t0 = Date.now();
      removeUserspaceService(manifests, s);
      let left: string[] = [];
      let refused = '';
      await waitFor(
        `the capture rules of ${s.ip} to go and proxy port ${port} to close`,
        async () => {
          left = rulesForDestination(await nat(), s.ip);
          const r = await p(n().ns.node, { host: '127.0.0.1', port, count: 1, timeoutMs: 500 });
          refused = describeProbe(r);
          return left.length === 0 && r.errors['ECONNREFUSED'] === 1 ? true : undefined;
        },
        { timeoutMs: CHANGE_BOUND_MS, intervalMs: 200 },
      ).catch((e: Error) => fail(`${e.message}; rules left: ${left.join(' | ') || 'none'}; node → 127.0.0.1:${port}: ${refused}`));
      timings['service removal latency'] = Date.now() - t0;
      const t1 = Date.now();
      const r = await p(pod(1), { host: s.ip, port: s.port, count: 3, timeoutMs: 500, concurrency: 3, stopAfterErrors: 0 });
      if (r.ok !== 0) fail(`the removed service still answers: ${describeProbe(r)}`);
      const other = Object.keys(r.errors).filter((e) => e !== 'ECONNREFUSED' && e !== 'TIMEOUT');
      if (other.length > 0) fail(`want refused or timed-out connections: ${describeProbe(r)}`);
      if ((r.timing.maxTryMs ?? 0) > 1000) fail(`tries not bounded: ${describeProbe(r)}`);
      const listening = listeningPorts(await ss());
      if (listening.has(`tcp/${port}`)) fail(`proxy port ${port} still listens after the service was removed`);
      const web = await p(pod(1), { host: USVC.web.ip, port: USVC.web.port, count: 4 });
      allOk(web, 'pod1 → web (other services unaffected)');
      timings['service removal: checks after removal'] = `${Date.now() - t1} ms (removed ClusterIP: ${describeProbe(r)})`;
    }));

  it('7. a long TCP transfer continues and completes when its endpoint is removed mid-transfer', () =>
    check('long-transfer', async () => {
      const s = USVC.stream;
      const bytes = 2 * 1024 * 1024;
      const durationMs = 6000;
      const t = startTransfer(n(), pod(3), { host: s.ip, port: s.port, bytes, durationMs, timeoutMs: durationMs + 15_000 });
      const h = await Promise.race([t.header, sleep(10_000).then(() => undefined)]);
      if (!h) fail(`no header from the stream service within 10 s: ${t.output()}`);
      const serving = h.pod;
      const remaining = STREAM_PODS.map(podName).find((x) => x !== serving);
      if (!remaining || !(STREAM_PODS.map(podName) as string[]).includes(serving)) fail(`transfer served by unexpected ${serving}: ${t.output()}`);
      if (h.source !== n().bridgeIp) fail(`the stream server saw source ${h.source}, want ${n().bridgeIp}`);
      const t0 = Date.now();
      writeUserspaceSlice(manifests, n(), s, STREAM_PODS.filter((i) => podName(i) !== serving));
      // 4 tries over 2 round-robin endpoints hit the removed pod twice while it is still an endpoint.
      await until(`${serving} to leave stream`, pod(1), { host: s.ip, port: s.port }, 4, (r) => r.ok === r.count && !r.byPod[serving]);
      const synced = Date.now();
      const atSync = t.progress();
      const d = await t.done;
      timings['long transfer'] =
        `${serving} served ${d.bytes}/${d.expected} B in ${d.ms} ms; removal effective after ${synced - t0} ms at ${atSync} B; ` +
        `finished ${d.at - synced} ms after that`;
      if (!d.ok) fail(`the transfer broke: ${JSON.stringify(d)}\nclient output:\n${t.output()}`);
      if (d.at <= synced || atSync >= bytes) {
        fail(`the transfer finished before the endpoint removal took effect (${timings['long transfer']}): make it longer`);
      }
      const after = await p(pod(1), { host: s.ip, port: s.port, count: 6 });
      allOk(after, 'pod1 → stream after the removal');
      onlyPods(after, [remaining], 'pod1 → stream after the removal');
    }));

  // ---- Flush detection (issue 10): capture rules flushed, chains kept --------------------------------

  /** Sync period of this suite's proxy (proxyArgs' default --iptables-sync-period). */
  const SYNC_PERIOD_MS = 2000;
  /** Slack on top of one sync period: the monitor's settle wait (0.5 s) and one resync on a busy machine. */
  const FLUSH_SLACK_MS = 6000;
  const flushWarnings = (): string[] => (proxy?.logs() ?? '').split('\n').filter((l) => l.includes('userspace capture rules were removed behind our back'));

  /** `iptables ARGS`, then `works` must hold again within one sync period + slack, with exactly one warning naming `table`. */
  async function flushAndRecover(name: string, args: string[], table: string, works: () => Promise<boolean>): Promise<string> {
    const nd = n();
    const warnings = flushWarnings().length;
    await iptables(nd, nd.ns.node, VARIANT, args);
    const t0 = Date.now();
    const chains = kubeChains(await iptablesSave(nd, nd.ns.node, VARIANT)).filter((c) => USERSPACE_CHAIN_RE.test(c.slice(c.indexOf('/') + 1)));
    if (chains.length !== 5) fail(`\`iptables ${args.join(' ')}\` should keep the five capture chains, have: ${chains.join(' ')}`);
    await waitFor(`${name}: the capture rules to work again`, async () => ((await works()) ? true : undefined), {
      timeoutMs: 3 * SYNC_PERIOD_MS + 8000,
      intervalMs: 250,
    });
    const took = Date.now() - t0;
    timings[`${name} recovery latency`] = took;
    if (took > SYNC_PERIOD_MS + FLUSH_SLACK_MS) fail(`capture rules came back after ${took} ms, want <= ${SYNC_PERIOD_MS} ms + ${FLUSH_SLACK_MS} ms slack`);
    const added = flushWarnings().slice(warnings);
    if (added.length !== 1) fail(`want exactly one flush warning, got ${added.length}:\n${added.join('\n')}`);
    if (!added[0]?.includes(`table="${table}"`)) fail(`the flush warning does not name table ${table}: ${added[0]}`);
    return added[0];
  }

  it('capture rules: `iptables -t nat -F` (chains kept) is noticed and re-installed within one sync period; nothing is reported before', () =>
    check('capture-flush-nat', async () => {
      const before = flushWarnings();
      if (before.length > 0) fail(`flush warnings although nothing was flushed:\n${before.join('\n')}`);
      // Recovered = the ClusterIP answers AND every jump is back: the proxier re-adds its jump rules one by
      // one after the restore, so traffic can work a few ms before the last jump (NodePort) is in.
      const recovered = async (): Promise<boolean> =>
        (await p(pod(3), { host: USVC.web.ip, port: USVC.web.port, count: 1, timeoutMs: 500, stopAfterErrors: 1 })).ok === 1 &&
        missingJumps(await iptablesSave(n(), n().ns.node, VARIANT)).length === 0;
      const warning = await flushAndRecover('capture nat -F', ['-t', 'nat', '-F'], 'nat', recovered);
      if (!warning.includes('KUBE-PORTALS-CONTAINER')) fail(`the warning does not say what was missing: ${warning}`);
      const dump = await iptablesSave(n(), n().ns.node, VARIANT);
      const noJump = missingJumps(dump);
      if (noJump.length > 0) fail(`missing jumps after recovery: ${noJump.join(', ')}`);
      allOk(await p(pod(3), { host: USVC.web.ip, port: USVC.web.port, count: 6 }), 'pod3 → web after recovery');
      allOk(await p(n().ns.client, { host: n().nodeIp, port: USVC.web.nodePort!, count: 4 }), 'client → NodePort after recovery');
    }));

  it('capture rules: `iptables -t filter -F` is noticed and KUBE-NODEPORT-NON-LOCAL is jumped to again within one sync period', () =>
    check('capture-flush-filter', async () => {
      const jumped = async (): Promise<boolean> => missingJumps(await iptablesSave(n(), n().ns.node, VARIANT, 'filter')).every((j) => !j.includes(CHAINS.nonLocal));
      await flushAndRecover('capture filter -F', ['-t', 'filter', '-F'], 'filter', jumped);
      const filter = await iptablesSave(n(), n().ns.node, VARIANT, 'filter');
      if (!filter.split('\n').some((l) => l.startsWith(`-A ${CHAINS.nonLocal} `))) fail(`${CHAINS.nonLocal} is empty after recovery:\n${filter}`);
    }));

  it('8. --cleanup --proxy-mode=userspace removes the KUBE-PORTALS-*/KUBE-NODEPORT-* chains and their jumps', () =>
    check('cleanup', async () => {
      const nd = n();
      const t0 = Date.now();
      const stopped = await proxy!.stop();
      timings['proxy exit on SIGTERM'] = `${JSON.stringify(stopped)} after ${Date.now() - t0} ms`;
      const r = await runProxyOnce(nd, ['--cleanup', '--proxy-mode=userspace', '-v=2']);
      timings['--cleanup run'] = r.durationMs;
      if (r.code !== 0) fail(`${KUBE_PROXY_BIN} --cleanup --proxy-mode=userspace exited ${r.code}:\n${r.stderr.slice(-4000)}`);
      const otherLeft: string[] = [];
      for (const v of IPTABLES_VARIANTS) {
        for (const tool of ['iptables-save', 'ip6tables-save'] as const) {
          const cmd = iptablesCommand(v, tool);
          const dump = (await nd.exec(nd.ns.node, cmd, [])).stdout;
          const chains = kubeChains(dump).filter((c) => USERSPACE_CHAIN_RE.test(c.slice(c.indexOf('/') + 1)));
          const jumps = dump.split('\n').filter((l) => /-j KUBE-(PORTALS|NODEPORT)-/.test(l));
          if (chains.length > 0 || jumps.length > 0) fail(`${cmd} still has ${[...chains, ...jumps].join(' | ')} after --cleanup:\n${dump}`);
          otherLeft.push(...kubeChains(dump, [HINT_CHAIN]).map((c) => `${cmd}:${c}`));
        }
      }
      timings['cleanup left other KUBE- chains'] = otherLeft.join(' ') || 'none';
      const t = await p(pod(1), { host: USVC.web.ip, port: USVC.web.port, count: 2, timeoutMs: 300, concurrency: 2 });
      if (t.ok !== 0) fail(`the ClusterIP still answers after --cleanup: ${describeProbe(t)}`);
    }));
});

if (!pre.run) {
  it('userspace datapath e2e skipped (not root or no ip netns)', () => undefined);
}
