/**
 * Issue 20 on the real kernel: Services whose namespace and name are 63 characters and port name 15
 * (`namespace/name:port` is 143 bytes; nft refuses comments over 128), IPv4 and IPv6, with and
 * without endpoints, beside a healthy short-named Service per family.
 *
 * - nftables, iptables-nft, iptables-legacy (tags kpmlf / kpmln / kpmll): `bin/kube-proxy --once
 *   --manifests=<tmp>` in the node namespace of a dual-stack simulated node must exit 0 in bounded
 *   time (the defect: every nft transaction failed on the no-endpoint-services element comment, so
 *   `--once` never ended and the node got no rules); the long Services' rules are in the kernel with
 *   their comments within the tool's limit; the healthy and the long Service with endpoints answer
 *   real TCP from the client, the long one without endpoints rejects a pod's connection.
 * - IPVS (no IPVS in this kernel; tags kpmin / kpmil): `ipset restore` of renderIpsetRestore and
 *   `ip(6)tables-restore --noflush` of renderIpvsIptables for such Services, loaded by the real tools.
 * ~40–70 s in all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDesiredIpvsState, renderIpsetRestore, renderIpvsIptables, type DesiredIpvsState } from '@kube-proxy/backend-ipvs/internal';
import type { IPFamily } from '@kube-proxy/core';
import {
  IPTABLES_VARIANTS,
  cleanupStaleRuns,
  createSimulatedNode,
  describeProbe,
  iptables,
  iptablesCommand,
  probe,
  runPrefix,
  startEchoServer,
  type CommandResult,
  type EchoServer,
  type IptablesVariant,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { HEALTHY, LONG, NODE_NAME, POD_TCP_PORT, longServicePorts, writeMaxLengthManifests, type LongService } from './support/max-length-scenario.js';
import { nft } from './support/nft-tables.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { proxyArgs, runProxyOnce } from './support/proxy.js';

const pre = await e2ePreflight('maximum-length names');
const describeNetns = pre.run ? describe : describe.skip;

/** --once must finish well within this (a first sync takes seconds; the defect never ended). */
const ONCE_TIMEOUT_MS = 90_000;
const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
const NFT_COMMENT_BYTES = 128;
const CLUSTER_CIDRS = '10.244.0.0/16,fd00:10:244::/48';

interface ProxyRun {
  readonly label: string;
  readonly mode: 'nftables' | 'iptables';
  readonly variant?: IptablesVariant;
  readonly tag: string;
}

const RUNS: readonly ProxyRun[] = [
  { label: 'nftables', mode: 'nftables', tag: 'kpmlf' },
  { label: 'iptables-nft', mode: 'iptables', variant: 'nft', tag: 'kpmln' },
  { label: 'iptables-legacy', mode: 'iptables', variant: 'legacy', tag: 'kpmll' },
];

function fail(message: string): never {
  throw new Error(message);
}

/** What the kernel holds for one family, as text: the nft table, or iptables-save of nat and filter. */
async function kernelRules(node: SimulatedNode, run: ProxyRun, family: IPFamily): Promise<string> {
  if (run.mode === 'nftables') {
    const r = await nft(node, node.ns.node, ['list', 'table', family === 'IPv6' ? 'ip6' : 'ip', 'kube-proxy']);
    return r.code === 0 ? r.stdout : fail(`nft list table failed: ${r.stderr}`);
  }
  const tool = family === 'IPv6' ? 'ip6tables-save' : 'iptables-save';
  const r = await node.exec(node.ns.node, iptablesCommand(run.variant!, tool), [], { allowFailure: true });
  return r.code === 0 ? r.stdout : fail(`${tool} failed: ${r.stderr}`);
}

/** The comment the rules of `s` must carry: cut to 128 bytes by nft mode, whole in iptables mode. */
function expectedText(run: ProxyRun, s: LongService): string {
  if (run.mode === 'nftables') return s.pods.length > 0 ? `${s.clusterIP} . tcp . 80` : `comment "${s.key.slice(0, NFT_COMMENT_BYTES)}"`;
  return s.pods.length > 0 ? `--comment "${s.key} cluster IP"` : `--comment "${s.key} has no endpoints"`;
}

describeNetns.each(RUNS)('maximum-length names through bin/kube-proxy --once ($label)', (run) => {
  let node: SimulatedNode | undefined;
  let servers: EchoServer[] = [];
  let dir = '';
  let once: CommandResult | undefined;
  let onceMs = 0;
  const env: Record<string, string> = {};
  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');

  beforeAll(async () => {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    dir = mkdtempSync(join(tmpdir(), `kp-e2e-max-length-${run.label}-`));
    if (run.variant === 'legacy') env['XTABLES_LOCKFILE'] = join(dir, 'xtables.lock');
    await cleanupStaleRuns(run.tag);
    node = await createSimulatedNode({ prefix: runPrefix(run.tag), ipv6: true, podCount: 2, env });
    servers = await Promise.all(node.pods.map((p) => startEchoServer(n(), p.ns, { tcpPorts: [POD_TCP_PORT], maxLifetimeS: 300 })));
    const manifests = join(dir, 'manifests');
    writeMaxLengthManifests(manifests, node);
    // kubelet's hint chain tells an iptables-mode proxy which variant the node uses.
    if (run.variant) await iptables(node, node.ns.node, run.variant, ['-t', 'mangle', '-N', HINT_CHAIN]);
    const t0 = Date.now();
    const args = proxyArgs({ manifestsDir: manifests, mode: run.mode, hostname: NODE_NAME, clusterCidr: CLUSTER_CIDRS, extra: ['--once'] });
    once = await runProxyOnce(node, args, { env, timeoutMs: ONCE_TIMEOUT_MS });
    onceMs = Date.now() - t0;
  }, ONCE_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('--once exits 0 in bounded time', () => {
    const r = once ?? fail('the proxy did not run');
    if (r.code !== 0) fail(`--proxy-mode=${run.mode} --once exited ${String(r.code)} after ${onceMs} ms:\n${r.stderr.slice(-4000)}`);
    expect(onceMs).toBeLessThan(ONCE_TIMEOUT_MS);
    expect(r.stderr).not.toMatch(/comment too long|sync failed|Failed to execute iptables-restore/);
  });

  it.each(['IPv4', 'IPv6'] as const)('the kernel holds the long %s Services with and without endpoints', async (family) => {
    const rules = await kernelRules(n(), run, family);
    for (const s of LONG.filter((x) => x.family === family)) {
      if (!rules.includes(expectedText(run, s))) fail(`no ${expectedText(run, s)} in the ${family} rules:\n${rules}`);
    }
    if (run.mode === 'nftables') {
      // Every comment the kernel holds is within nft's limit, and the long Services' affinity sets are there.
      for (const m of rules.matchAll(/comment "([^"]*)"/g)) expect(Buffer.byteLength(m[1]!)).toBeLessThanOrEqual(NFT_COMMENT_BYTES);
      expect(rules).toMatch(/set affinity-\S+max-length\S+/);
    }
  });

  it.each(['IPv4', 'IPv6'] as const)('%s: the healthy and the long Service with endpoints answer the client; the one without rejects a pod', async (family) => {
    const nd = n();
    const [withEps, noEps] = [LONG.find((s) => s.family === family && s.pods.length > 0)!, LONG.find((s) => s.family === family && s.pods.length === 0)!];
    const healthy = await probe(nd, nd.ns.client, { host: HEALTHY[family], port: 80, count: 3, stopAfterErrors: 3 });
    const long = await probe(nd, nd.ns.client, { host: withEps.clusterIP, port: 80, count: 3, stopAfterErrors: 3 });
    // From a pod, as the datapath suites check rejects. 3 s per try: over veth the node's ICMPv6
    // reject can reach the pod while its connect() still holds the socket lock, and the kernel then
    // keeps it as a soft error (TcpExtLockDroppedIcmps, measured) until the SYN is resent after 1 s.
    const rejected = await probe(nd, nd.ns.pods[0]!, { host: noEps.clusterIP, port: 80, count: 2, timeoutMs: 3000, stopAfterErrors: 2 });
    const got = { healthy: healthy.byPod, long: long.byPod, rejected: rejected.errors };
    const want = { healthy: { pod1: 3 }, long: { pod2: 3 }, rejected: { ECONNREFUSED: 2 } };
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      fail(`got ${JSON.stringify(got)}, want ${JSON.stringify(want)}\n${describeProbe(healthy)}\n${describeProbe(long)}\n${describeProbe(rejected)}\n${await kernelRules(nd, run, family)}`);
    }
  });
});

const IPVS_TAGS: Record<IptablesVariant, string> = { nft: 'kpmin', legacy: 'kpmil' };

describeNetns.each(IPTABLES_VARIANTS)('IPVS batches for maximum-length names, loaded by the real tools (iptables-%s)', (variant) => {
  let node: SimulatedNode | undefined;
  let dir = '';
  const env: Record<string, string> = {};
  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const state = (family: IPFamily): DesiredIpvsState => {
    const { serviceMap, endpointsMap } = longServicePorts(family);
    const nodeIP = family === 'IPv4' ? '192.168.50.1' : 'fd00:192:168:50::1';
    return buildDesiredIpvsState(serviceMap, endpointsMap, { family, nodeName: NODE_NAME, nodeLabels: {}, nodeIP, nodePortAddresses: { all: true }, localAddresses: [nodeIP] });
  };
  const states = { IPv4: state('IPv4'), IPv6: state('IPv6') };
  const payload = (family: IPFamily): string =>
    renderIpvsIptables(states[family], { family, masqueradeBit: 14, masqueradeAll: false, localDetector: { kind: 'none' }, randomFully: false }).payload;

  beforeAll(async () => {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    dir = mkdtempSync(join(tmpdir(), `kp-e2e-max-length-ipvs-${variant}-`));
    if (variant === 'legacy') env['XTABLES_LOCKFILE'] = join(dir, 'xtables.lock');
    await cleanupStaleRuns(IPVS_TAGS[variant]);
    node = await createSimulatedNode({ prefix: runPrefix(IPVS_TAGS[variant]), ipv6: true, podCount: 1, env });
  }, 60_000);

  afterAll(async () => {
    await node?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('ipset restore and ip(6)tables-restore accept the batches; the long Services are in the sets', async () => {
    const nd = n();
    const ipset = renderIpsetRestore(states.IPv4) + renderIpsetRestore(states.IPv6);
    const loaded = await nd.exec(nd.ns.node, 'ipset', ['restore'], { input: ipset, allowFailure: true });
    if (loaded.code !== 0) fail(`ipset restore failed: ${loaded.stderr}`);
    for (const family of ['IPv4', 'IPv6'] as const) {
      const tool = iptablesCommand(variant, family === 'IPv6' ? 'ip6tables-restore' : 'iptables-restore');
      const r = await nd.exec(nd.ns.node, tool, ['-w', '5', '--noflush', '--counters'], { input: payload(family), allowFailure: true });
      if (r.code !== 0) fail(`${tool} failed: ${r.stderr}`);
      const saved = (await nd.exec(nd.ns.node, iptablesCommand(variant, family === 'IPv6' ? 'ip6tables-save' : 'iptables-save'), [])).stdout;
      expect(saved.match(/--match-set/g)?.length).toBe(payload(family).match(/--match-set/g)?.length);
    }
    const cluster = (await nd.exec(nd.ns.node, 'ipset', ['list', 'KUBE-CLUSTER-IP'])).stdout + (await nd.exec(nd.ns.node, 'ipset', ['list', 'KUBE-6-CLUSTER-IP'])).stdout;
    for (const s of LONG) expect(cluster).toContain(`${s.clusterIP},tcp:80`);
  });
});
