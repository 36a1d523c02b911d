import type { IPFamily, PacketTrace, TraceNode, TracePacket, V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { settle } from '@kube-proxy/core/testing';
import { NODE, NODE_IP, rig, service, service6, slice, slice6, start } from '../proxier/testing/proxier-fixtures.js';
import { ipvsTracer } from './ipvs-tracer.js';

/*
 * The IPVS tracer over the --dry-run block our IPVS proxier really prints for each Service shape
 * (in-memory kernel and iptables: the same text `kube-proxy --dry-run` shows), so the trace is
 * checked against the rules, sets and virtual servers the mode programs, not hand-written ones.
 */

async function dryRunBlock(services: readonly V1Service[], slices: readonly V1EndpointSlice[], family: IPFamily = 'IPv4', config: Record<string, unknown> = {}): Promise<string> {
  const r = rig({ config }, undefined, { family, ...(family === 'IPv6' ? { networkInterfaces: V6_INTERFACES } : {}) });
  start(r, services, slices);
  void r.proxier.syncLoop();
  await settle();
  await r.proxier.firstSync();
  r.proxier.stop();
  const text = r.context.dryRunSink.text;
  return text.slice(text.indexOf('\n') + 1);
}

const NODE_IP6 = 'fd00:192:168::1';
const V6_INTERFACES = () => ({
  eth0: [{ address: NODE_IP6, family: 'IPv6' as const, netmask: 'ffff:ffff:ffff:ffff::', internal: false, mac: '00:00:00:00:00:01', cidr: `${NODE_IP6}/64`, scopeid: 0 }],
});

const node: TraceNode = { name: NODE, addresses: [NODE_IP] };

function packet(from: string, to: string, port: number, extra: Partial<TracePacket> = {}): TracePacket {
  return { family: to.includes(':') ? 'IPv6' : 'IPv4', protocol: 'TCP', sourceIP: from, destIP: to, destPort: port, locallyGenerated: false, ...extra };
}

async function traceOf(services: readonly V1Service[], slices: readonly V1EndpointSlice[], p: TracePacket, n: TraceNode = node, config: Record<string, unknown> = {}): Promise<PacketTrace> {
  const text = await dryRunBlock(services, slices, p.family, config);
  return ipvsTracer.trace(ipvsTracer.fromDryRun(text, p.family), p, n);
}

function local(ips: readonly string[], name: string, more: Record<string, unknown> = {}): V1EndpointSlice {
  const s = slice(name, ips);
  return { ...s, endpoints: ips.map((ip) => ({ addresses: [ip], nodeName: NODE, conditions: { ready: true } })), ...more } as V1EndpointSlice;
}

const WEB = service('web', '10.96.0.10');
const WEB_EPS = slice('web', ['10.244.1.5', '10.244.2.6']);

describe('ipvsTracer over our IPVS --dry-run', () => {
  it('ClusterIP from a pod: IPVS sends it to one of the real servers, equal chances, no masquerade (cluster CIDR set)', async () => {
    const t = await traceOf([WEB], [WEB_EPS], packet('10.244.9.9', '10.96.0.10', 80));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.1.5:8080', '10.244.2.6:8080']);
    expect(t.choices).toEqual([
      { endpoint: '10.244.1.5:8080', probability: 0.5 },
      { endpoint: '10.244.2.6:8080', probability: 0.5 },
    ]);
    expect(t.masquerade).toBe(false);
    expect(t.service).toBeNull();
    expect(t.reason).toBe('the Service at TCP 10.96.0.10:80 sends the connection to one of 2 endpoints');
    const where = t.path.map((s) => s.where);
    expect(where).toContain('nat/KUBE-SERVICES');
    expect(where).toContain('ipset KUBE-CLUSTER-IP');
    expect(where).toContain('ipvs TCP 10.96.0.10:80');
    expect(t.path).toContainEqual({ where: 'ipset KUBE-CLUSTER-IP', rule: 'add KUBE-CLUSTER-IP 10.96.0.10,tcp:80' });
    expect(t.path).toContainEqual(expect.objectContaining({ where: 'ipvs TCP 10.96.0.10:80', rule: '-A -t 10.96.0.10:80 -s rr' }));
    expect(t.path).toContainEqual(expect.objectContaining({ where: 'ipvs TCP 10.96.0.10:80', rule: '-a -t 10.96.0.10:80 -r 10.244.2.6:8080 -m -w 1' }));
  });

  it('ClusterIP from outside the cluster CIDR is masqueraded by the KUBE-CLUSTER-IP rule', async () => {
    const t = await traceOf([WEB], [WEB_EPS], packet('192.0.2.7', '10.96.0.10', 80));
    expect(t.verdict).toBe('DNAT');
    expect(t.masquerade).toBe(true);
    expect(t.masqueradeReason).toBe('traffic to a cluster IP from outside the cluster CIDR is masqueraded');
  });

  it('ClusterIP on a port no Service has: KUBE-IPVS-FILTER rejects it', async () => {
    const t = await traceOf([WEB], [WEB_EPS], packet('10.244.9.9', '10.96.0.10', 81));
    expect(t.verdict).toBe('REJECT');
    expect(t.endpoints).toEqual([]);
    expect(t.reason).toBe('10.96.0.10 is a Service address on this node, but no Service answers on TCP port 81');
    expect(t.path[t.path.length - 1]).toEqual(expect.objectContaining({ where: 'filter/KUBE-IPVS-FILTER' }));
  });

  it('an address no Service has passes unchanged (ACCEPT)', async () => {
    const t = await traceOf([WEB], [WEB_EPS], packet('10.244.9.9', '10.96.0.77', 80));
    expect(t).toEqual(expect.objectContaining({ verdict: 'ACCEPT', endpoints: [], masquerade: false, service: null }));
    expect(t.reason).toBe('no Service rule matches TCP 10.96.0.77:80; the packet passes unchanged');
  });

  it('no endpoints: the virtual server has no real server and IPVS refuses the connection (ICMP port unreachable)', async () => {
    const t = await traceOf([WEB], [], packet('10.244.9.9', '10.96.0.10', 80));
    expect(t.verdict).toBe('REJECT');
    expect(t.endpoints).toEqual([]);
    expect(t.reason).toBe('the Service at TCP 10.96.0.10:80 has no ready endpoints');
  });

  it('NodePort on the node address: the node-address virtual server, masqueraded as external traffic', async () => {
    const np = service('np', '10.96.0.20', { type: 'NodePort', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }] });
    const t = await traceOf([np], [slice('np', ['10.244.3.7'])], packet('203.0.113.5', NODE_IP, 30080));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.3.7:8080']);
    expect(t.masquerade).toBe(true);
    expect(t.masqueradeReason).toBe('external traffic under externalTrafficPolicy Cluster is masqueraded');
    expect(t.path.map((s) => s.where)).toContain(`ipvs TCP ${NODE_IP}:30080`);
    expect(t.path).toContainEqual({ where: 'ipset KUBE-NODE-PORT-TCP', rule: 'add KUBE-NODE-PORT-TCP 30080' });
  });

  it('NodePort on an address that is not the node\'s: no virtual server takes it', async () => {
    const np = service('np', '10.96.0.20', { type: 'NodePort', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }] });
    const t = await traceOf([np], [slice('np', ['10.244.3.7'])], packet('203.0.113.5', '192.168.50.99', 30080));
    expect(t.verdict).toBe('ACCEPT');
  });

  it('externalIP: sent to the endpoints and masqueraded', async () => {
    const svc = service('ext', '10.96.0.30', { externalIPs: ['192.0.2.50'] });
    const t = await traceOf([svc], [slice('ext', ['10.244.2.51'])], packet('198.51.100.3', '192.0.2.50', 80));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.2.51:8080']);
    expect(t.masquerade).toBe(true);
    expect(t.path).toContainEqual({ where: 'ipset KUBE-EXTERNAL-IP', rule: 'add KUBE-EXTERNAL-IP 192.0.2.50,tcp:80' });
  });

  describe('LoadBalancer with loadBalancerSourceRanges', () => {
    const lb = service('shop', '10.96.1.20', {
      type: 'LoadBalancer',
      loadBalancerSourceRanges: ['198.51.100.0/24'],
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30443 }],
    });
    const withStatus = { ...lb, status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } } } as V1Service;
    const eps = slice('shop', ['10.244.1.31', '10.244.2.32']);

    it('an allowed source reaches the endpoints (masqueraded: Cluster policy)', async () => {
      const t = await traceOf([withStatus], [eps], packet('198.51.100.7', '203.0.113.10', 80));
      expect(t.verdict).toBe('DNAT');
      expect(t.endpoints).toEqual(['10.244.1.31:8080', '10.244.2.32:8080']);
      expect(t.masquerade).toBe(true);
      expect(t.path).toContainEqual({ where: 'ipset KUBE-LOAD-BALANCER-SOURCE-CIDR', rule: 'add KUBE-LOAD-BALANCER-SOURCE-CIDR 203.0.113.10,tcp:80,198.51.100.0/24' });
    });

    it('a source outside the ranges is dropped by KUBE-SOURCE-RANGES-FIREWALL', async () => {
      const t = await traceOf([withStatus], [eps], packet('192.0.2.1', '203.0.113.10', 80));
      expect(t.verdict).toBe('DROP');
      expect(t.endpoints).toEqual([]);
      expect(t.reason).toBe('source 192.0.2.1 is outside loadBalancerSourceRanges of TCP 203.0.113.10:80');
      expect(t.path[t.path.length - 1]).toEqual({ where: 'filter/KUBE-SOURCE-RANGES-FIREWALL', rule: '-A KUBE-SOURCE-RANGES-FIREWALL -j DROP' });
    });

    it("the node's own connection (OUTPUT, from the LB IP the kernel picks as source) when the ranges leave it out: KUBE-IPVS-OUT-FILTER drops it", async () => {
      const t = await traceOf([withStatus], [eps], packet('203.0.113.10', '203.0.113.10', 80, { locallyGenerated: true }));
      expect(t.verdict).toBe('DROP');
      expect(t.reason).toBe('source 203.0.113.10 is outside loadBalancerSourceRanges of TCP 203.0.113.10:80');
      expect(t.path[t.path.length - 1]).toEqual(expect.objectContaining({ where: 'filter/KUBE-IPVS-OUT-FILTER', rule: '-A KUBE-IPVS-OUT-FILTER -s 203.0.113.10 -m ipvs --vaddr 203.0.113.10 --vproto tcp --vport 80 -j DROP' }));
    });
  });

  it('externalTrafficPolicy Local without a local endpoint: the LB virtual server has no real server', async () => {
    const lb = service('loc', '10.96.1.21', {
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32100,
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30081 }],
    });
    const svc = { ...lb, status: { loadBalancer: { ingress: [{ ip: '203.0.113.11' }] } } } as V1Service;
    const eps = slice('loc', ['10.244.2.42']); // on node-2
    const external = await traceOf([svc], [eps], packet('198.51.100.7', '203.0.113.11', 80));
    expect(external.verdict).toBe('REJECT');
    expect(external.reason).toBe('externalTrafficPolicy Local and no local endpoint of TCP 203.0.113.11:80 on node-1');
    expect(external.masquerade).toBe(false);
    const nodePort = await traceOf([svc], [eps], packet('198.51.100.7', NODE_IP, 30081));
    expect(nodePort.verdict).toBe('REJECT');
    expect(nodePort.reason).toBe(`externalTrafficPolicy Local and no local endpoint of TCP ${NODE_IP}:30081 on node-1`);
    // The cluster IP still reaches every endpoint.
    const cluster = await traceOf([svc], [eps], packet('10.244.9.9', '10.96.1.21', 80));
    expect(cluster.endpoints).toEqual(['10.244.2.42:8080']);
  });

  it('externalTrafficPolicy Local with a local endpoint keeps the source (KUBE-LOAD-BALANCER-LOCAL returns first)', async () => {
    const lb = service('loc', '10.96.1.21', {
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32100,
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30081 }],
    });
    const svc = { ...lb, status: { loadBalancer: { ingress: [{ ip: '203.0.113.11' }] } } } as V1Service;
    const t = await traceOf([svc], [local(['10.244.1.41'], 'loc')], packet('198.51.100.7', '203.0.113.11', 80));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.1.41:8080']);
    expect(t.masquerade).toBe(false);
  });

  it('ClientIP affinity (-p): every real server is listed', async () => {
    const sticky = service('sticky', '10.96.0.12', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } });
    const t = await traceOf([sticky], [slice('sticky', ['10.244.1.11', '10.244.1.12', '10.244.1.13'])], packet('10.244.9.9', '10.96.0.12', 80));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.1.11:8080', '10.244.1.12:8080', '10.244.1.13:8080']);
    expect(t.path).toContainEqual(expect.objectContaining({ rule: '-A -t 10.96.0.12:80 -s rr -p 600', note: 'scheduler rr; ClientIP affinity for 600s' }));
  });

  it('weight 0 (terminating, kept for existing connections) is never chosen for a new connection', async () => {
    const eps = slice('web', ['10.244.1.5', '10.244.2.6']);
    const first = await dryRunBlock([WEB], [eps]);
    // The kernel as IPVS graceful termination leaves it: one real server at weight 0.
    const snapshot = ipvsTracer.fromDryRun(first.replace('-a -t 10.96.0.10:80 -r 10.244.2.6:8080 -m -w 1', '-a -t 10.96.0.10:80 -r 10.244.2.6:8080 -m -w 0'), 'IPv4');
    const t = ipvsTracer.trace(snapshot, packet('10.244.9.9', '10.96.0.10', 80), node);
    expect(t.endpoints).toEqual(['10.244.1.5:8080']);
    expect(t.choices).toEqual([{ endpoint: '10.244.1.5:8080', probability: 1 }]);
    expect(t.path).toContainEqual(expect.objectContaining({ rule: '-a -t 10.96.0.10:80 -r 10.244.2.6:8080 -m -w 0', note: 'weight 0 (terminating): no new connections' }));
    const none = ipvsTracer.trace(ipvsTracer.fromDryRun(first.replace(/-m -w 1/g, '-m -w 0'), 'IPv4'), packet('10.244.9.9', '10.96.0.10', 80), node);
    expect(none.verdict).toBe('REJECT');
  });

  it('weights decide the chances', async () => {
    const text = (await dryRunBlock([WEB], [WEB_EPS])).replace('-r 10.244.1.5:8080 -m -w 1', '-r 10.244.1.5:8080 -m -w 3');
    const t = ipvsTracer.trace(ipvsTracer.fromDryRun(text, 'IPv4'), packet('10.244.9.9', '10.96.0.10', 80), node);
    expect(t.choices).toEqual([
      { endpoint: '10.244.1.5:8080', probability: 0.75 },
      { endpoint: '10.244.2.6:8080', probability: 0.25 },
    ]);
  });

  it('the OUTPUT path: the node itself reaches a cluster IP (IPVS takes it at LOCAL_OUT; filter INPUT is not met)', async () => {
    const t = await traceOf([WEB], [WEB_EPS], packet(NODE_IP, '10.96.0.10', 80, { locallyGenerated: true }));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.1.5:8080', '10.244.2.6:8080']);
    expect(t.masquerade).toBe(true); // from outside the cluster CIDR
    expect(t.path.some((s) => s.where.startsWith('filter/KUBE-IPVS-FILTER'))).toBe(false);
    expect(t.path[0]?.where).toBe('nat/OUTPUT');
  });

  it('a pod reaching itself through the Service is masqueraded (KUBE-LOOP-BACK)', async () => {
    const t = await traceOf([WEB], [local(['10.244.1.5'], 'web')], packet('10.244.1.5', '10.96.0.10', 80));
    expect(t.verdict).toBe('DNAT');
    expect(t.masquerade).toBe(true);
    expect(t.masqueradeReason).toBe('a pod reaching itself through the Service (hairpin) is masqueraded');
  });

  it('IPv6: KUBE-6- sets and bracketed endpoints', async () => {
    const svc = service6('v6', 'fd00:10:96::a');
    const t = await traceOf([svc], [slice6('v6', ['fd00:10:244::5', 'fd00:10:244::6'])], packet('fd00:10:244::9', 'fd00:10:96::a', 80), { name: NODE, addresses: [NODE_IP6] }, { clusterCIDR: 'fd00:10:244::/64' });
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['[fd00:10:244::5]:8080', '[fd00:10:244::6]:8080']);
    expect(t.path).toContainEqual({ where: 'ipset KUBE-6-CLUSTER-IP', rule: 'add KUBE-6-CLUSTER-IP fd00:10:96::a,tcp:80' });
    expect(t.path.map((s) => s.where)).toContain('ipvs TCP [fd00:10:96::a]:80');
    const outside = await traceOf([svc], [slice6('v6', ['fd00:10:244::5'])], packet('2001:db8::1', 'fd00:10:96::a', 80), { name: NODE, addresses: [NODE_IP6] }, { clusterCIDR: 'fd00:10:244::/64' });
    expect(outside.endpoints).toEqual(['[fd00:10:244::5]:8080']);
    expect(outside.masquerade).toBe(true);
    const none = await traceOf([svc], [], packet('fd00:10:244::9', 'fd00:10:96::a', 80), { name: NODE, addresses: [NODE_IP6] }, { clusterCIDR: 'fd00:10:244::/64' });
    expect(none.verdict).toBe('REJECT');
    expect(none.reason).toBe('the Service at TCP [fd00:10:96::a]:80 has no ready endpoints');
  });

  it('UDP: a UDP virtual server, not the TCP one', async () => {
    const dns = service('dns', '10.96.0.53', { ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 }] });
    const eps = { ...slice('dns', ['10.244.1.2'], 'UDP', 53), ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] } as V1EndpointSlice;
    const t = await traceOf([dns], [eps], packet('10.244.9.9', '10.96.0.53', 53, { protocol: 'UDP' }));
    expect(t.verdict).toBe('DNAT');
    expect(t.endpoints).toEqual(['10.244.1.2:53']);
    const tcp = await traceOf([dns], [eps], packet('10.244.9.9', '10.96.0.53', 53));
    expect(tcp.verdict).toBe('REJECT');
  });
});
