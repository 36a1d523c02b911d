import type { PacketTrace, TraceNode, TracePacket, V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { isNoRulesFound, nullLogger, systemClock } from '@kube-proxy/core';
import { FakeCommandExecutor } from '@kube-proxy/core/testing';
import { UserspaceProxier } from '../proxier/userspace-proxier.js';
import { newProxyCounters, dryRunSocketOpener } from '@kube-proxy/userspace-proxy';
import { context, NODE, service, slice } from '../testing/proxier-fixtures.js';
import { userspaceTracer } from './userspace-tracer.js';

/*
 * The userspace tracer over the --dry-run block our userspace proxier really prints (socket table
 * and capture payload), and over the same rules read back from a (fake) node's iptables-save.
 */

const NODE_IP = '192.168.49.2';
const node: TraceNode = { name: NODE, addresses: [NODE_IP] };

async function dryRunBlock(services: readonly V1Service[], slices: readonly V1EndpointSlice[], bindAddress = '0.0.0.0'): Promise<string> {
  const ctx = context({ dryRun: true, nodeIPs: { IPv4: NODE_IP }, config: { portRange: '36000-36099', bindAddress } });
  const proxier = new UserspaceProxier({ family: 'IPv4', context: ctx, iptables: null, openSocket: dryRunSocketOpener(), counters: newProxyCounters(), clock: systemClock, logger: nullLogger });
  void proxier.syncLoop();
  for (const s of services) proxier.onServiceAdd(s);
  for (const s of slices) proxier.onEndpointSliceAdd(s);
  proxier.onServicesSynced();
  proxier.onEndpointSlicesSynced();
  await proxier.firstSync();
  proxier.stop();
  const text = ctx.dryRunSink.text;
  return text.slice(text.indexOf('\n') + 1);
}

function packet(from: string, to: string, port: number, extra: Partial<TracePacket> = {}): TracePacket {
  return { family: 'IPv4', protocol: 'TCP', sourceIP: from, destIP: to, destPort: port, locallyGenerated: false, ...extra };
}

async function traceOf(services: readonly V1Service[], slices: readonly V1EndpointSlice[], p: TracePacket, bindAddress?: string): Promise<PacketTrace> {
  return userspaceTracer.trace(userspaceTracer.fromDryRun(await dryRunBlock(services, slices, bindAddress), 'IPv4'), p, node);
}

const WEB = service('web', '10.96.0.10', [{ name: 'http', port: 80 }]);
const WEB_EPS = slice('web', '1', 'http', 8080, [{ ip: '10.244.1.11' }, { ip: '10.244.2.21', node: 'node-2' }]);

describe('userspaceTracer over our userspace --dry-run', () => {
  it('ClusterIP from a pod: REDIRECT to the proxy socket, which sends to one of its endpoints (round robin, equal chances)', async () => {
    const t = await traceOf([WEB], [WEB_EPS], packet('10.244.9.9', '10.96.0.10', 80));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.1.11:8080', '10.244.2.21:8080']);
    expect(t.choices).toEqual([
      { endpoint: '10.244.1.11:8080', probability: 0.5 },
      { endpoint: '10.244.2.21:8080', probability: 0.5 },
    ]);
    expect(t.service).toBe('default/web:http');
    expect(t.masquerade).toBe(true);
    expect(t.masqueradeReason).toBe("the userspace proxy opens its own connection to the endpoint: the endpoint sees the node's address, not the client's");
    expect(t.reason).toBe('default/web:http sends the connection to one of 2 endpoints');
    expect(t.path.map((s) => s.where)).toEqual(['nat/PREROUTING', 'nat/KUBE-PORTALS-CONTAINER', 'filter/INPUT', `proxy socket TCP ${NODE_IP}:36000`]);
    expect(t.path[1]).toEqual(expect.objectContaining({ rule: '-A KUBE-PORTALS-CONTAINER -m comment --comment default/web:http -p tcp -m tcp --dport 80 -d 10.96.0.10/32 -j REDIRECT --to-ports 36000', service: 'default/web:http' }));
  });

  it('the OUTPUT path: KUBE-PORTALS-HOST DNATs to the node IP and proxy port', async () => {
    const t = await traceOf([WEB], [WEB_EPS], packet(NODE_IP, '10.96.0.10', 80, { locallyGenerated: true }));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.1.11:8080', '10.244.2.21:8080']);
    expect(t.path.map((s) => s.where)).toEqual(['nat/OUTPUT', 'nat/KUBE-PORTALS-HOST', 'filter/INPUT', `proxy socket TCP ${NODE_IP}:36000`]);
    expect(t.path[1]?.rule).toBe(`-A KUBE-PORTALS-HOST -m comment --comment default/web:http -p tcp -m tcp --dport 80 -d 10.96.0.10/32 -j DNAT --to-destination ${NODE_IP}:36000`);
  });

  it('with --bind-address set, pods are DNATed to that address', async () => {
    const t = await traceOf([WEB], [WEB_EPS], packet('10.244.9.9', '10.96.0.10', 80), NODE_IP);
    expect(t.path[1]?.rule).toBe(`-A KUBE-PORTALS-CONTAINER -m comment --comment default/web:http -p tcp -m tcp --dport 80 -d 10.96.0.10/32 -j DNAT --to-destination ${NODE_IP}:36000`);
    expect(t.endpoints).toEqual(['10.244.1.11:8080', '10.244.2.21:8080']);
  });

  it('no endpoints: TCP is reset by the proxy (REJECT), UDP dropped (DROP)', async () => {
    const tcp = await traceOf([WEB], [], packet('10.244.9.9', '10.96.0.10', 80));
    expect([tcp.verdict, tcp.endpoints, tcp.masquerade]).toEqual(['REJECT', [], false]);
    expect(tcp.reason).toBe('service default/web has no ready endpoints for port default/web:http: the userspace proxy resets the connection');
    const dns = service('dns', '10.96.0.53', [{ name: 'dns', port: 53, protocol: 'UDP' }]);
    const udp = await traceOf([dns], [], packet('10.244.9.9', '10.96.0.53', 53, { protocol: 'UDP' }));
    expect([udp.verdict, udp.endpoints]).toEqual(['DROP', []]);
    expect(udp.reason).toBe('service default/dns has no ready endpoints for port default/dns:dns: the userspace proxy drops the datagram');
  });

  it('NodePort on a node address (KUBE-NODEPORT-CONTAINER behind the addrtype LOCAL jump)', async () => {
    const np = service('np', '10.96.0.11', [{ name: 'http', port: 80, nodePort: 30080 }], { type: 'NodePort' });
    const t = await traceOf([np], [slice('np', '1', 'http', 8080, [{ ip: '10.244.1.11' }])], packet('203.0.113.5', NODE_IP, 30080));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.1.11:8080']);
    // The portal jump is taken (and finds nothing), then the node-port jump; filter INPUT accepts the proxy port.
    expect(t.path.map((s) => s.where)).toEqual(['nat/PREROUTING', 'nat/PREROUTING', 'nat/KUBE-NODEPORT-CONTAINER', 'filter/INPUT', 'filter/KUBE-NODEPORT-NON-LOCAL', `proxy socket TCP ${NODE_IP}:36000`]);
    // The node port on an address that is not the node's is not captured.
    expect((await traceOf([np], [], packet('203.0.113.5', '192.0.2.77', 30080))).verdict).toBe('ACCEPT');
  });

  it('externalIP: captured from pods not coming over a bridge', async () => {
    const ext = service('ext', '10.96.0.30', [{ name: 'api', port: 8080 }], { externalIPs: ['192.0.2.50'] });
    const t = await traceOf([ext], [slice('ext', '1', 'api', 8080, [{ ip: '10.244.2.51' }])], packet('198.51.100.3', '192.0.2.50', 8080));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.2.51:8080']);
  });

  it('externalTrafficPolicy Local without a local endpoint: the external socket has none, the cluster IP still forwards', async () => {
    const np = service('loc', '10.96.1.21', [{ name: 'http', port: 80, nodePort: 30081 }], { type: 'NodePort', externalTrafficPolicy: 'Local' });
    const eps = slice('loc', '1', 'http', 8080, [{ ip: '10.244.2.42', node: 'node-2' }]);
    const external = await traceOf([np], [eps], packet('203.0.113.5', NODE_IP, 30081));
    expect(external.verdict).toBe('REJECT');
    expect(external.reason).toBe('externalTrafficPolicy Local and no local endpoint of default/loc:http on node-1; service default/loc has no ready endpoints for port default/loc:http: the userspace proxy resets the connection');
    const cluster = await traceOf([np], [eps], packet('10.244.9.9', '10.96.1.21', 80));
    expect(cluster.endpoints).toEqual(['10.244.2.42:8080']);
  });

  it('ClientIP affinity: every endpoint is listed', async () => {
    const sticky = service('sticky', '10.96.0.12', [{ name: '', port: 80 }], { affinitySeconds: 600 });
    const t = await traceOf([sticky], [slice('sticky', '1', '', 8080, [{ ip: '10.244.1.11' }, { ip: '10.244.1.12' }, { ip: '10.244.1.13' }])], packet('10.244.9.9', '10.96.0.12', 80));
    expect(t.endpoints).toEqual(['10.244.1.11:8080', '10.244.1.12:8080', '10.244.1.13:8080']);
    expect(t.service).toBe('default/sticky:');
  });

  it('an address no Service has passes unchanged', async () => {
    const t = await traceOf([WEB], [WEB_EPS], packet('10.244.9.9', '10.96.0.99', 80));
    expect(t).toEqual(expect.objectContaining({ verdict: 'ACCEPT', endpoints: [], service: null, reason: 'no Service rule matches TCP 10.96.0.99:80; the packet passes unchanged' }));
  });

  it('objectsOf: the proxy socket with its endpoints and the capture chains naming the Service', async () => {
    const snapshot = userspaceTracer.fromDryRun(await dryRunBlock([WEB], [WEB_EPS]), 'IPv4');
    expect(userspaceTracer.objectsOf(snapshot, 'default/web')).toEqual([
      { kind: 'proxy socket', name: 'TCP 0.0.0.0:36000 (all)', rules: 2, endpoints: ['10.244.1.11:8080', '10.244.2.21:8080'] },
      { kind: 'chain', name: 'nat/KUBE-PORTALS-CONTAINER', rules: 1 },
      { kind: 'chain', name: 'nat/KUBE-PORTALS-HOST', rules: 1 },
    ]);
  });
});

describe('userspaceTracer.readLive (fake executor)', () => {
  async function liveNode(): Promise<FakeCommandExecutor> {
    const block = await dryRunBlock([WEB], [WEB_EPS]);
    const payload = block.split('\n').filter((l) => !l.startsWith('#')).join('\n');
    // What iptables-legacy-save prints after a sync: the built-in chains' jumps and the capture chains.
    const nat = payload.slice(payload.indexOf('*nat'), payload.indexOf('*filter')).replace(
      ':KUBE-PORTALS-CONTAINER - [0:0]',
      [
        ':PREROUTING ACCEPT [0:0]',
        ':OUTPUT ACCEPT [0:0]',
        ':KUBE-PORTALS-CONTAINER - [0:0]',
        '-A PREROUTING -m comment --comment "handle ClusterIPs; NOTE: this must be before the NodePort rules" -j KUBE-PORTALS-CONTAINER',
        '-A PREROUTING -m addrtype --dst-type LOCAL -m comment --comment "handle service NodePorts; NOTE: this must be the last rule in the chain" -j KUBE-NODEPORT-CONTAINER',
        '-A OUTPUT -m comment --comment "handle ClusterIPs; NOTE: this must be before the NodePort rules" -j KUBE-PORTALS-HOST',
      ].join('\n'),
    );
    return new FakeCommandExecutor()
      // each save runs once without -t: legacy prints every loaded table (kubelet's mangle too), nft with
      // only legacy tables present nothing but its warning
      .on({ command: 'iptables-legacy-save', args: [] }, { exitCode: 0, stdout: `*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n${nat}${payload.slice(payload.indexOf('*filter'))}` })
      .on({ command: 'iptables-nft-save', args: [] }, { exitCode: 0, stdout: '# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n' });
  }

  it('reads the capture chains; the endpoints live in the proxy, so the trace ends at the proxy socket and says so', async () => {
    const snapshot = await userspaceTracer.readLive(await liveNode(), 'IPv4');
    if (isNoRulesFound(snapshot)) throw new Error(snapshot.lookedFor);
    expect(snapshot.source).toBe('iptables-legacy-save');
    const t = userspaceTracer.trace(snapshot, packet('10.244.9.9', '10.96.0.10', 80), node);
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual([`${NODE_IP}:36000`]);
    expect(t.service).toBe('default/web:http');
    expect(t.reason).toBe(`default/web:http is captured to the userspace proxy socket ${NODE_IP}:36000, which forwards it to one of the Service's endpoints; the kernel does not hold them (the running proxy's /debug/trace names them)`);
    expect(userspaceTracer.objectsOf(snapshot, 'default/web')).toEqual([
      { kind: 'proxy socket', name: 'TCP *:36000 (all)', rules: 0 },
      { kind: 'chain', name: 'nat/KUBE-PORTALS-CONTAINER', rules: 1 },
      { kind: 'chain', name: 'nat/KUBE-PORTALS-HOST', rules: 1 },
    ]);
  });

  it('a node without the capture chains: nothing found, saying what was looked for', async () => {
    const read = await userspaceTracer.readLive(new FakeCommandExecutor().setDefault({ exitCode: 0, stdout: '*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n' }), 'IPv4');
    expect(read).toEqual({
      found: false,
      lookedFor: 'the userspace capture chains nat/KUBE-PORTALS-CONTAINER and nat/KUBE-PORTALS-HOST (iptables-legacy-save, iptables-nft-save)',
    });
    const none = await userspaceTracer.readLive(new FakeCommandExecutor(), 'IPv6');
    expect(isNoRulesFound(none)).toBe(true);
  });
});
