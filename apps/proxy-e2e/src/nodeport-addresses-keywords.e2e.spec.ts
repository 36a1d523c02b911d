/**
 * Real-kernel e2e of `--nodeport-addresses` keywords: `bin/kube-proxy --proxy-mode=MODE
 * --nodeport-addresses=primary,localhost` in the node namespace of a simulated node (libs/testing/netns),
 * for the modes that serve loopback NodePorts without a feature gate (iptables: route_localnet, set in
 * the node namespace only; userspace: capture rules to the proxy's socket). The NodePort answers on the
 * node's primary IP (the Node object's InternalIP) and on 127.0.0.1 from the node itself, and no longer
 * on the node's other address (its pod-bridge address), which `all` (or no flag) would serve too.
 * Every probe is bounded in tries and time; the namespaces are created and removed by exact name.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanupStaleRuns, createSimulatedNode, iptables, iptablesSave, probe, runPrefix, startEchoServer, waitFor, type EchoServer, type ProbeOptions, type ProbeResult, type SimulatedNode } from '@kube-proxy/testing-netns';
import { allOk, fail } from './support/probe-assertions.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { proxyArgs, startProxy, type RunningProxy } from './support/proxy.js';
import { POD_TCP_PORT, POD_UDP_PORT } from './support/scenario.js';
import { USVC, captureRules, missingJumps, writeUserspaceManifests } from './support/userspace-scenario.js';

const pre = await e2ePreflight('userspace nodePortAddresses');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpna';
const PORT_RANGES = { userspace: '20100-20149', iptables: '' } as const;
const VARIANT = 'nft' as const;
const WEB = USVC.web;
const NODE_PORT = WEB.nodePort ?? fail('web has no NodePort');

/** The rules that serve NODE_PORT, by destination ("any" when unrestricted), as each mode writes them. */
const MODES = {
  userspace: {
    ready: (dump: string) => captureRules(dump, 'KUBE-NODEPORT-CONTAINER', { proto: 'tcp', dport: NODE_PORT }).length > 0 && missingJumps(dump).length === 0,
    destinations: (nat: string) => nat.split('\n').filter((l) => l.startsWith('-A KUBE-NODEPORT-CONTAINER') && l.includes(`--dport ${NODE_PORT} `)),
  },
  iptables: {
    ready: (dump: string) => dump.split('\n').some((l) => l.startsWith('-A KUBE-NODEPORTS') && l.includes(`--dport ${NODE_PORT} `)),
    destinations: (nat: string) => nat.split('\n').filter((l) => l.startsWith('-A KUBE-SERVICES') && l.endsWith('-j KUBE-NODEPORTS')),
  },
} as const;

describeNetns.each(['userspace', 'iptables'] as const)('%s: --nodeport-addresses=primary,localhost narrows the NodePort (real traffic)', (mode) => {
  let node: SimulatedNode | undefined;
  let proxy: RunningProxy | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const p = (ns: string, o: ProbeOptions): Promise<ProbeResult> => probe(n(), ns, { stopAfterErrors: 3, timeoutMs: 2000, ...o });
  const why = (): string => `\n${proxy?.tail(40) ?? '(no proxy)'}`;

  beforeAll(async () => {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    dir = mkdtempSync(join(tmpdir(), 'kp-e2e-npa-'));
    const manifests = join(dir, 'manifests');
    // One tag per mode (kpnau, kpnai): each run cleans only its own leftovers.
    const tag = `${TAG}${mode[0]}`;
    await cleanupStaleRuns(tag);
    node = await createSimulatedNode({ prefix: runPrefix(tag) });
    servers = await Promise.all(n().pods.map((pd) => startEchoServer(n(), pd.ns, { tcpPorts: [POD_TCP_PORT], udpPorts: [POD_UDP_PORT], maxLifetimeS: 300 })));
    writeUserspaceManifests(manifests, n());
    // kubelet's hint chain pins the proxy to iptables-nft, as in the userspace datapath suite.
    await iptables(n(), n().ns.node, VARIANT, ['-t', 'mangle', '-N', 'KUBE-IPTABLES-HINT']);
    const portRange = PORT_RANGES[mode] === '' ? [] : [`--proxy-port-range=${PORT_RANGES[mode]}`];
    const args = proxyArgs({ mode, manifestsDir: manifests, extra: [...portRange, '--nodeport-addresses=primary,localhost'] });
    proxy = startProxy(n(), args, { logFile: join(dir, 'proxy.log') });
    await waitFor(
      `the NodePort rules of web (${mode})`,
      async () => {
        if (proxy?.exited()) fail(`kube-proxy exited with ${proxy.exitCode()}:${why()}`);
        return MODES[mode].ready(await iptablesSave(n(), n().ns.node, VARIANT)) ? true : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
  }, 150_000);

  afterAll(async () => {
    if (proxy) await proxy.stop();
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('serves the NodePort only on the primary IP and 127.0.0.1 (one rule each, nothing unrestricted)', async () => {
    const rules = MODES[mode].destinations(await iptablesSave(n(), n().ns.node, VARIANT, 'nat'));
    expect(rules.map((l) => / -d (\S+) /.exec(l)?.[1] ?? 'any').sort()).toEqual(['127.0.0.1/32', `${n().nodeIp}/32`].sort());
  });

  it('the client reaches the NodePort on the primary IP', async () => {
    allOk(await p(n().ns.client, { host: n().nodeIp, port: NODE_PORT, count: 6 }), `client → ${n().nodeIp}:${NODE_PORT}`);
  });

  it('the node reaches its NodePort on 127.0.0.1 (localhost)', async () => {
    allOk(await p(n().ns.node, { host: '127.0.0.1', port: NODE_PORT, count: 6 }), `node → 127.0.0.1:${NODE_PORT}`);
  });

  it("a pod no longer reaches the NodePort on the node's bridge address (not selected): refused", async () => {
    const pod = n().ns.pods[0] ?? fail('no pod');
    const r = await p(pod, { host: n().bridgeIp, port: NODE_PORT, count: 3, timeoutMs: 1000 });
    expect({ ok: r.ok, errors: r.errors }).toEqual({ ok: 0, errors: { ECONNREFUSED: 3 } });
    // The same pod does reach the primary IP's NodePort.
    allOk(await p(pod, { host: n().nodeIp, port: NODE_PORT, count: 3 }), `pod → ${n().nodeIp}:${NODE_PORT}`);
  });
});

if (!pre.run) {
  describe('nodePortAddresses keywords e2e', () => {
    it('skipped (not root or no ip netns)', () => undefined);
  });
}
