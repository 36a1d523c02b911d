// nftables mode with the KubeProxyNFTablesLocalhostNodePorts gate: the reject objects upstream
// v1.37 writes (kubernetes PR #138427's expected lines), and the listener set following the
// service ports through the proxier's own plans (eTP Local, affinity, removal). Listeners bind
// real ports on 127.0.0.1 that the kernel reports free; endpoints are pod IPs nothing dials here.
import type { IPFamily, V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { FakeClock, FakeCommandExecutor, RecordingLogger, testContext } from '@kube-proxy/core/testing';
import { FdBudget } from '@kube-proxy/userspace-proxy';
import { HostNft } from '../kernel/host-nft.js';
import { MemoryNft } from '../kernel/memory-nft.js';
import { familyOf } from '../nft/nft-objects.js';
import { NftablesProxier } from '../proxier/nftables-proxier.js';
import { makeTestEndpointSlice, makeTestService, TEST_NODE_IP, TEST_NODE_IPV6, TEST_NODE_NAME } from '../testing/fake-proxier.js';
import { freePort } from '../testing/free-port.js';
import type { LocalhostListenerObserver } from './localhost-listeners.js';

interface Setup {
  readonly gate?: boolean;
  readonly nodePortAddresses: readonly string[];
  readonly family?: IPFamily;
  /** No listeners (the run's shared part left out, as in --dry-run). */
  readonly withoutListeners?: boolean;
  /** The kernel a previous process programmed (a restart). */
  readonly nft?: MemoryNft;
}

function newProxier(setup: Setup) {
  const family = setup.family ?? 'IPv4';
  const counts: number[] = [];
  const observer: LocalhostListenerObserver = { listeners: (_f, n) => counts.push(n), creationFailed: () => undefined };
  const context = testContext({
    nodeName: TEST_NODE_NAME,
    nodeIPs: { IPv4: TEST_NODE_IP, IPv6: TEST_NODE_IPV6 },
    families: [family],
    config: {
      clusterCIDR: family === 'IPv6' ? 'fd00:10::/64' : '10.0.0.0/8',
      nodePortAddresses: [...setup.nodePortAddresses],
      featureGates: setup.gate === false ? {} : { KubeProxyNFTablesLocalhostNodePorts: true },
    },
  });
  const nft = setup.nft ?? new MemoryNft(familyOf(family));
  const proxier = new NftablesProxier({
    family,
    context,
    nft,
    executor: new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: '0 flow entries have been deleted.\n' }),
    clock: new FakeClock(),
    logger: new RecordingLogger(),
    masqueradeMark: '0x4000',
    ...(setup.withoutListeners ? {} : { localhost: { budget: new FdBudget(100), observer } }),
    networkInterfaces: () => ({}),
  });
  proxier.onServiceCIDRsChanged([family === 'IPv6' ? 'fd00:10:96::/112' : '172.30.0.0/16']);
  proxier.onServicesSynced();
  proxier.onEndpointSlicesSynced();
  return { proxier, nft, counts };
}

function nodePortService(name: string, clusterIP: string, protocol: 'TCP' | 'UDP' | 'SCTP', nodePort: number, extra: Record<string, unknown> = {}): V1Service {
  return makeTestService('ns1', name, (s) =>
    Object.assign(s.spec, { type: 'NodePort', clusterIP, selector: { app: name }, ports: [{ name: 'p', port: 80, protocol, nodePort }], ...extra }),
  );
}

function slice(name: string, protocol: 'TCP' | 'UDP' | 'SCTP', endpoints: ReadonlyArray<{ ip: string; node: string }>, addressType: 'IPv4' | 'IPv6' = 'IPv4'): V1EndpointSlice {
  return makeTestEndpointSlice('ns1', name, 1, (eps) => {
    eps.addressType = addressType;
    eps.ports = [{ name: 'p', port: 8080, protocol }];
    eps.endpoints = endpoints.map((e) => ({ addresses: [e.ip], nodeName: e.node, conditions: { ready: true } }));
  });
}

describe('nftables localhost NodePorts (KEP-6032)', () => {
  const proxiers: NftablesProxier[] = [];
  afterEach(() => {
    for (const p of proxiers.splice(0)) p.stop();
  });

  it('gate off: nothing of it in the table, no listeners', async () => {
    const { proxier, nft } = newProxier({ gate: false, nodePortAddresses: ['127.0.0.0/8', `${TEST_NODE_IP}/32`] });
    proxiers.push(proxier);
    proxier.onServiceAdd(nodePortService('dns', '172.30.0.53', 'UDP', 30053));
    await proxier.syncProxyRules();
    expect(proxier.localhost).toBeUndefined();
    expect(nft.table.dump()).not.toContain('localhost');
  });

  it("writes upstream's reject objects: UDP/SCTP always, TCP too when nodePortAddresses names no loopback address", async () => {
    const { proxier, nft } = newProxier({ nodePortAddresses: [`${TEST_NODE_IP}/32`], withoutListeners: true });
    proxiers.push(proxier);
    proxier.onServiceAdd(nodePortService('dns', '172.30.0.53', 'UDP', 30053));
    proxier.onServiceAdd(nodePortService('sctp', '172.30.0.54', 'SCTP', 30054));
    proxier.onServiceAdd(nodePortService('web', '172.30.0.80', 'TCP', 30080));
    proxier.onServiceAdd(makeTestService('ns1', 'internal', (s) => Object.assign(s.spec, { clusterIP: '172.30.0.90', ports: [{ name: 'p', port: 80, protocol: 'UDP' }] })));
    await proxier.syncProxyRules();
    expect(proxier.localhost?.proxyActive).toBe(false);
    const dump = nft.table.dump();
    for (const want of [
      'add chain ip kube-proxy localhost-nodeport-reject-udp',
      'add chain ip kube-proxy localhost-nodeport-reject-sctp',
      'add chain ip kube-proxy localhost-nodeport-reject-tcp',
      'add rule ip kube-proxy localhost-nodeport-reject-udp counter reject',
      'add rule ip kube-proxy nodeport-endpoints-check ip daddr 127.0.0.0/8 meta l4proto . th dport vmap @localhost-nodeport-reject-ports',
      'add element ip kube-proxy localhost-nodeport-reject-ports { udp . 30053 : goto localhost-nodeport-reject-udp }',
      'add element ip kube-proxy localhost-nodeport-reject-ports { sctp . 30054 : goto localhost-nodeport-reject-sctp }',
      'add element ip kube-proxy localhost-nodeport-reject-ports { tcp . 30080 : goto localhost-nodeport-reject-tcp }',
    ]) {
      expect(dump).toContain(want + '\n');
    }
    // A service port without a NodePort has no element.
    expect(dump.match(/add element ip kube-proxy localhost-nodeport-reject-ports/g)).toHaveLength(3);
    // The element goes with its service.
    proxier.onServiceDelete(nodePortService('dns', '172.30.0.53', 'UDP', 30053));
    await proxier.syncProxyRules();
    expect(nft.table.dump()).not.toContain('udp . 30053');
  });

  it('IPv6: the dispatch matches ::1', async () => {
    const { proxier, nft } = newProxier({ family: 'IPv6', nodePortAddresses: ['::1/128'], withoutListeners: true });
    proxiers.push(proxier);
    proxier.onServiceAdd(makeTestService('ns1', 'dns', (s) => Object.assign(s.spec, { type: 'NodePort', clusterIP: 'fd00:10:96::53', ipFamilies: ['IPv6'], ports: [{ name: 'p', port: 53, protocol: 'UDP', nodePort: 30053 }] })));
    await proxier.syncProxyRules();
    expect(proxier.localhost?.proxyActive).toBe(true);
    const dump = nft.table.dump();
    expect(dump).toContain('add rule ip6 kube-proxy nodeport-endpoints-check ip6 daddr ::1 meta l4proto . th dport vmap @localhost-nodeport-reject-ports\n');
    expect(dump).toContain('add element ip6 kube-proxy localhost-nodeport-reject-ports { udp . 30053 : goto localhost-nodeport-reject-udp }\n');
  });

  it('with loopback in nodePortAddresses: a listener per TCP NodePort with the endpoints external traffic may use (eTP Local: local ones only, none: no listener), affinity from the Service', async () => {
    const { proxier, nft, counts } = newProxier({ nodePortAddresses: ['127.0.0.0/8', `${TEST_NODE_IP}/32`] });
    proxiers.push(proxier);
    const [cluster, local, localNone] = [await freePort(), await freePort(), await freePort()];
    proxier.onServiceAdd(nodePortService('cluster', '172.30.0.1', 'TCP', cluster, { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }));
    proxier.onServiceAdd(nodePortService('local', '172.30.0.2', 'TCP', local, { externalTrafficPolicy: 'Local' }));
    proxier.onServiceAdd(nodePortService('localnone', '172.30.0.3', 'TCP', localNone, { externalTrafficPolicy: 'Local' }));
    const eps = [
      { ip: '10.0.1.1', node: TEST_NODE_NAME },
      { ip: '10.0.2.1', node: 'other-node' },
    ];
    proxier.onEndpointSliceAdd(slice('cluster', 'TCP', eps));
    proxier.onEndpointSliceAdd(slice('local', 'TCP', eps));
    proxier.onEndpointSliceAdd(slice('localnone', 'TCP', [{ ip: '10.0.3.1', node: 'other-node' }]));
    await proxier.syncProxyRules();

    const listeners = proxier.localhost!.listeners!;
    expect(listeners.ports).toEqual([cluster, local].sort((a, b) => a - b));
    expect(listeners.endpointsOf(cluster)).toEqual(['10.0.1.1:8080', '10.0.2.1:8080']);
    expect(listeners.endpointsOf(local)).toEqual(['10.0.1.1:8080']);
    expect(listeners.endpointsOf(localNone)).toBeUndefined();
    expect(counts.at(-1)).toBe(2);
    // TCP NodePorts served on loopback get no reject element.
    expect(nft.table.dump()).not.toContain('add element ip kube-proxy localhost-nodeport-reject-ports');

    // The local endpoint moves away: the eTP Local listener goes; the service is deleted: its listener goes.
    proxier.onEndpointSliceUpdate(slice('local', 'TCP', eps), slice('local', 'TCP', [{ ip: '10.0.2.1', node: 'other-node' }]));
    proxier.onServiceDelete(nodePortService('cluster', '172.30.0.1', 'TCP', cluster));
    await proxier.syncProxyRules();
    expect(listeners.ports).toEqual([]);
    expect(counts.at(-1)).toBe(0);
  });

  it('a restart with loopback newly named drops the TCP reject element the previous process wrote (upstream issue #142183)', async () => {
    const port = await freePort();
    const web = nodePortService('web', '172.30.0.80', 'TCP', port);
    const eps = slice('web', 'TCP', [{ ip: '10.0.1.1', node: TEST_NODE_NAME }]);
    const before = newProxier({ nodePortAddresses: [`${TEST_NODE_IP}/32`], withoutListeners: true });
    before.proxier.onServiceAdd(web);
    before.proxier.onEndpointSliceAdd(eps);
    await before.proxier.syncProxyRules();
    before.proxier.stop();
    expect(before.nft.table.dump()).toContain(`tcp . ${port} : goto localhost-nodeport-reject-tcp`);

    const after = newProxier({ nodePortAddresses: ['127.0.0.0/8', `${TEST_NODE_IP}/32`], nft: before.nft });
    proxiers.push(after.proxier);
    after.proxier.onServiceAdd(web);
    after.proxier.onEndpointSliceAdd(eps);
    await after.proxier.syncProxyRules();
    expect(after.nft.table.dump()).not.toContain(`tcp . ${port} : goto localhost-nodeport-reject-tcp`);
    expect(after.proxier.localhost!.listeners!.ports).toEqual([port]);
  });

  it("a restart reads the reject map's elements from the host's nft, so the take-over can drop the unclaimed ones", async () => {
    const sets = 'table ip kube-proxy {\n\tset cluster-ips {\n\t\ttype ipv4_addr\n\t}\n}\n';
    const map =
      '{"nftables": [{"map": {"family": "ip", "name": "localhost-nodeport-reject-ports", "table": "kube-proxy", "type": ["inet_proto", "inet_service"], "map": "verdict", "elem": [[{"concat": ["tcp", 30080]}, {"goto": {"target": "localhost-nodeport-reject-tcp"}}]]}}]}';
    const exec = new FakeCommandExecutor()
      .setDefault({ stdout: '{"nftables": []}' })
      .on({ command: 'nft', args: ['-t', 'list', 'table', 'ip', 'kube-proxy'] }, { stdout: sets })
      .on({ command: 'nft', args: ['-j', 'list', 'map', 'ip', 'kube-proxy', 'localhost-nodeport-reject-ports'] }, { stdout: map });
    const state = await new HostNft(exec, 'ip').readState();
    expect([...(state?.elements.get('localhost-nodeport-reject-ports') ?? [])]).toEqual([['tcp . 30080', 'tcp . 30080 : goto localhost-nodeport-reject-tcp']]);
  });

  it('stopping the proxier closes its listeners', async () => {
    const { proxier } = newProxier({ nodePortAddresses: ['127.0.0.1/32'] });
    const port = await freePort();
    proxier.onServiceAdd(nodePortService('web', '172.30.0.80', 'TCP', port));
    proxier.onEndpointSliceAdd(slice('web', 'TCP', [{ ip: '10.0.1.1', node: TEST_NODE_NAME }]));
    await proxier.syncProxyRules();
    expect(proxier.localhost!.listeners!.ports).toEqual([port]);
    proxier.stop();
    expect(proxier.localhost!.listeners!.ports).toEqual([]);
  });
});
