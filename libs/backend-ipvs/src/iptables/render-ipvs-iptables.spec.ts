import { UnsafeRestoreTextError, type LocalTrafficDetector } from '@kube-proxy/core';
import type { DesiredIpvsState } from '../state/ipvs-state.js';
import { makeService, TestCluster, type TestService } from '../testing/ipvs-fixtures.js';
import type { IpvsIptablesOptions } from './ipvs-iptables-options.js';
import { renderIpvsIptables } from './render-ipvs-iptables.js';
import { chainRules, tableLines } from './testing/payload-rules.js';

// Ported from upstream pkg/proxy/ipvs/proxier_test.go (the iptables half of TestLoadBalancer,
// TestOnlyLocalNodePorts, TestHealthCheckNodePort, TestLoadBalancerSourceRanges,
// TestAcceptIPVSTraffic, TestOnlyLocalLoadBalancing, TestMasqueradeRule): upstream checks, per chain,
// the jump target and matched set of each rule in order (checkIptables); chainRules reads our payload
// the same way. Upstream's fake proxier uses the no-op local detector; so do these unless said.
// The golden payloads are ours, written rule by rule from upstream's writeIptablesRules.

const SVC_IP = '10.20.30.41';
const LB_IP = '1.2.3.4';

function options(overrides: Partial<IpvsIptablesOptions> = {}): IpvsIptablesOptions {
  return { family: 'IPv4', masqueradeBit: 14, masqueradeAll: false, localDetector: { kind: 'none' }, randomFully: false, ...overrides };
}

function render(state: DesiredIpvsState, overrides: Partial<IpvsIptablesOptions> = {}): string {
  return renderIpvsIptables(state, options({ family: state.family, ...overrides })).payload;
}

function cluster(svc: TestService, endpoints: Array<{ ip: string; port: number; nodeName?: string }> = [{ ip: '10.180.0.1', port: 80 }]): TestCluster {
  const c = new TestCluster();
  c.service(svc);
  c.endpoints('ns1/svc1:p80', endpoints);
  return c;
}

function svc1(fn: (svc: Parameters<Parameters<typeof makeService>[2]>[0]) => void): TestService {
  return makeService('ns1', 'svc1', (svc) => {
    svc.spec.clusterIP = SVC_IP;
    svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
    fn(svc);
  });
}

const loadBalancer = (fn: (svc: Parameters<Parameters<typeof makeService>[2]>[0]) => void = () => undefined) =>
  svc1((svc) => {
    svc.spec.type = 'LoadBalancer';
    svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
    svc.status.loadBalancer = { ingress: [{ ip: LB_IP }] };
    fn(svc);
  });

const nodePortLocal = () =>
  svc1((svc) => {
    svc.spec.type = 'NodePort';
    svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
    svc.spec.externalTrafficPolicy = 'Local';
  });

const EMPTY_STATE_PAYLOAD = `*nat
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-NODE-PORT - [0:0]
:KUBE-LOAD-BALANCER - [0:0]
:KUBE-MARK-MASQ - [0:0]
-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN
-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT
-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ
-A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000
COMMIT
*filter
:KUBE-FORWARD - [0:0]
:KUBE-NODE-PORT - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
:KUBE-SOURCE-RANGES-FIREWALL - [0:0]
:KUBE-IPVS-FILTER - [0:0]
:KUBE-IPVS-OUT-FILTER - [0:0]
-A KUBE-SOURCE-RANGES-FIREWALL -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT
-A KUBE-IPVS-FILTER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j RETURN
-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT
COMMIT
`;

describe('renderIpvsIptables', () => {
  it('writes the fixed skeleton, every owned chain declared, when no service exists (only the always-written rules)', () => {
    expect(render(new TestCluster().state())).toBe(EMPTY_STATE_PAYLOAD);
  });

  it('renders a LoadBalancer with source ranges, an external IP and a local endpoint rule for rule as upstream (golden)', () => {
    const c = cluster(
      loadBalancer((svc) => {
        svc.spec.externalIPs = ['50.60.70.81'];
        svc.spec.loadBalancerSourceRanges = ['10.0.0.0/8'];
      }),
      [{ ip: '10.180.0.1', port: 80, nodeName: 'test-hostname' }],
    );
    const payload = render(c.state(), { localDetector: { kind: 'cidr', cidr: '10.0.0.0/8' }, randomFully: true });
    expect(payload).toBe(`*nat
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-NODE-PORT - [0:0]
:KUBE-LOAD-BALANCER - [0:0]
:KUBE-MARK-MASQ - [0:0]
-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN
-A KUBE-POSTROUTING -m comment --comment "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose" -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE
-A KUBE-SERVICES -m comment --comment "Kubernetes service lb portal" -m set --match-set KUBE-LOAD-BALANCER dst,dst -j KUBE-LOAD-BALANCER
-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port for masquerade purpose" -m set --match-set KUBE-NODE-PORT-TCP dst -j KUBE-MARK-MASQ
-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -j KUBE-MARK-MASQ
-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT
-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -m addrtype --dst-type LOCAL -j ACCEPT
-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT
-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ
-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT
-A KUBE-SERVICES -m set --match-set KUBE-LOAD-BALANCER dst,dst -j ACCEPT
-A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000
COMMIT
*filter
:KUBE-FORWARD - [0:0]
:KUBE-NODE-PORT - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
:KUBE-SOURCE-RANGES-FIREWALL - [0:0]
:KUBE-IPVS-FILTER - [0:0]
:KUBE-IPVS-OUT-FILTER - [0:0]
-A KUBE-PROXY-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port for load balancer with sourceRange" -m set --match-set KUBE-LOAD-BALANCER-FW dst,dst -j KUBE-SOURCE-RANGES-FIREWALL
-A KUBE-SOURCE-RANGES-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port + source cidr for packet filter purpose" -m set --match-set KUBE-LOAD-BALANCER-SOURCE-CIDR dst,dst,src -j RETURN
-A KUBE-SOURCE-RANGES-FIREWALL -j DROP
-A KUBE-IPVS-OUT-FILTER -s 1.2.3.4 -m ipvs --vaddr 1.2.3.4 --vproto tcp --vport 80 -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT
-A KUBE-IPVS-FILTER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -j RETURN
-A KUBE-IPVS-FILTER -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j RETURN
-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT
COMMIT
`);
  });

  it('TestLoadBalancer: LB IPs jump to KUBE-LOAD-BALANCER, which marks for masquerade; cluster IP and LB accepted last', () => {
    const payload = render(cluster(loadBalancer()).state());
    expect(chainRules(payload, 'KUBE-SERVICES')).toEqual([
      { jump: 'RETURN', matchSet: '', source: '127.0.0.0/8' },
      { jump: 'KUBE-LOAD-BALANCER', matchSet: 'KUBE-LOAD-BALANCER' },
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-CLUSTER-IP' },
      { jump: 'KUBE-NODE-PORT', matchSet: '' },
      { jump: 'ACCEPT', matchSet: 'KUBE-CLUSTER-IP' },
      { jump: 'ACCEPT', matchSet: 'KUBE-LOAD-BALANCER' },
    ]);
    expect(chainRules(payload, 'KUBE-LOAD-BALANCER')).toEqual([{ jump: 'KUBE-MARK-MASQ', matchSet: '' }]);
  });

  it('TestOnlyLocalNodePorts: Local node ports RETURN before all node ports are marked; health-check ports accepted in filter', () => {
    const payload = render(cluster(nodePortLocal(), [{ ip: '10.180.0.1', port: 80, nodeName: 'test-hostname' }, { ip: '10.180.1.1', port: 80, nodeName: 'other-node' }]).state());
    expect(chainRules(payload, 'KUBE-SERVICES')).toEqual([
      { jump: 'RETURN', matchSet: '', source: '127.0.0.0/8' },
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-CLUSTER-IP' },
      { jump: 'KUBE-NODE-PORT', matchSet: '' },
      { jump: 'ACCEPT', matchSet: 'KUBE-CLUSTER-IP' },
    ]);
    expect(chainRules(payload, 'KUBE-NODE-PORT')).toEqual([
      { jump: 'RETURN', matchSet: 'KUBE-NODE-PORT-LOCAL-TCP' },
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-NODE-PORT-TCP' },
      { jump: 'ACCEPT', matchSet: 'KUBE-HEALTH-CHECK-NODE-PORT' },
    ]);
    expect(payload).toContain('-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port with externalTrafficPolicy=local" -m set --match-set KUBE-NODE-PORT-LOCAL-TCP dst -j RETURN\n');
  });

  it('TestHealthCheckNodePort: the same KUBE-NODE-PORT rules for Local LoadBalancers with health-check ports', () => {
    const c = new TestCluster();
    for (const [name, hc, policy] of [['valid-svc1', 30000, 'Local'], ['valid-svc2', 30001, 'Local'], ['invalid-svc3', 30002, 'Cluster']] as const) {
      c.service(makeService('ns1', name, (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = SVC_IP;
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3000 }];
        svc.spec.externalTrafficPolicy = policy;
        svc.spec.healthCheckNodePort = hc;
      }));
    }
    const payload = render(c.state());
    expect(chainRules(payload, 'KUBE-NODE-PORT')).toEqual([
      { jump: 'RETURN', matchSet: 'KUBE-NODE-PORT-LOCAL-TCP' },
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-NODE-PORT-TCP' },
      { jump: 'ACCEPT', matchSet: 'KUBE-HEALTH-CHECK-NODE-PORT' },
    ]);
  });

  it('TestLoadBalancerSourceRanges: firewalled LB IPs go through KUBE-SOURCE-RANGES-FIREWALL, allowed ranges RETURN, the rest DROP', () => {
    const payload = render(cluster(loadBalancer((svc) => (svc.spec.loadBalancerSourceRanges = ['10.0.0.0/8']))).state());
    expect(chainRules(payload, 'KUBE-SERVICES')).toEqual([
      { jump: 'RETURN', matchSet: '', source: '127.0.0.0/8' },
      { jump: 'KUBE-LOAD-BALANCER', matchSet: 'KUBE-LOAD-BALANCER' },
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-CLUSTER-IP' },
      { jump: 'KUBE-NODE-PORT', matchSet: '' },
      { jump: 'ACCEPT', matchSet: 'KUBE-CLUSTER-IP' },
      { jump: 'ACCEPT', matchSet: 'KUBE-LOAD-BALANCER' },
    ]);
    expect(chainRules(payload, 'KUBE-PROXY-FIREWALL')).toEqual([{ jump: 'KUBE-SOURCE-RANGES-FIREWALL', matchSet: 'KUBE-LOAD-BALANCER-FW' }]);
    expect(chainRules(payload, 'KUBE-SOURCE-RANGES-FIREWALL')).toEqual([
      { jump: 'RETURN', matchSet: 'KUBE-LOAD-BALANCER-SOURCE-CIDR' },
      { jump: 'DROP', matchSet: '' },
    ]);
  });

  it('TestAcceptIPVSTraffic: external IPs are marked and accepted twice (off-machine, local destination) before the node-port jump', () => {
    const c = new TestCluster();
    const services: Array<[string, string, string]> = [['svc1', '10.20.30.40', 'ClusterIP'], ['svc2', '10.20.30.41', 'LoadBalancer'], ['svc3', '10.20.30.42', 'NodePort']];
    for (const [name, ip, type] of services) {
      c.service(makeService('ns1', name, (svc) => {
        svc.spec.type = type;
        svc.spec.clusterIP = ip;
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 80 }];
        if (type === 'LoadBalancer') svc.status.loadBalancer = { ingress: [{ ip: LB_IP }] };
        if (type === 'ClusterIP') svc.spec.externalIPs = ['5.6.7.8'];
      }));
    }
    expect(chainRules(render(c.state()), 'KUBE-SERVICES')).toEqual([
      { jump: 'RETURN', matchSet: '', source: '127.0.0.0/8' },
      { jump: 'KUBE-LOAD-BALANCER', matchSet: 'KUBE-LOAD-BALANCER' },
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-CLUSTER-IP' },
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-EXTERNAL-IP' },
      { jump: 'ACCEPT', matchSet: 'KUBE-EXTERNAL-IP' },
      { jump: 'ACCEPT', matchSet: 'KUBE-EXTERNAL-IP' },
      { jump: 'KUBE-NODE-PORT', matchSet: '' },
      { jump: 'ACCEPT', matchSet: 'KUBE-CLUSTER-IP' },
      { jump: 'ACCEPT', matchSet: 'KUBE-LOAD-BALANCER' },
    ]);
  });

  it('TestOnlyLocalLoadBalancing: Local LB IPs RETURN from KUBE-LOAD-BALANCER before the masquerade mark', () => {
    const c = cluster(loadBalancer((svc) => (svc.spec.externalTrafficPolicy = 'Local')), [
      { ip: '10.180.0.1', port: 80, nodeName: 'test-hostname' },
      { ip: '10.180.1.1', port: 80, nodeName: 'other-node' },
    ]);
    expect(chainRules(render(c.state()), 'KUBE-LOAD-BALANCER')).toEqual([
      { jump: 'RETURN', matchSet: 'KUBE-LOAD-BALANCER-LOCAL' },
      { jump: 'KUBE-MARK-MASQ', matchSet: '' },
    ]);
  });

  it('Local-policy external IPs are accepted but never marked (KUBE-EXTERNAL-IP-LOCAL)', () => {
    const c = cluster(svc1((svc) => {
      svc.spec.type = 'NodePort';
      svc.spec.externalIPs = ['50.60.70.81'];
      svc.spec.externalTrafficPolicy = 'Local';
      svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
    }), [{ ip: '10.180.0.1', port: 80, nodeName: 'test-hostname' }]);
    const rules = chainRules(render(c.state()), 'KUBE-SERVICES').filter((r) => r.matchSet.startsWith('KUBE-EXTERNAL-IP'));
    expect(rules).toEqual([
      { jump: 'ACCEPT', matchSet: 'KUBE-EXTERNAL-IP-LOCAL' },
      { jump: 'ACCEPT', matchSet: 'KUBE-EXTERNAL-IP-LOCAL' },
    ]);
  });

  it('TestMasqueradeRule: MASQUERADE carries --random-fully exactly when iptables supports it', () => {
    const state = new TestCluster().state();
    const masq = (randomFully: boolean) => tableLines(render(state, { randomFully }), 'nat').filter((l) => l.includes('-j MASQUERADE'));
    expect(masq(false)).toEqual(['-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE']);
    expect(masq(true)).toEqual(['-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully']);
  });

  describe('the cluster IP masquerade rule', () => {
    const state = cluster(svc1(() => undefined)).state();
    const clusterRule = (o: Partial<IpvsIptablesOptions>) => tableLines(render(state, o), 'nat').find((l) => l.includes('--match-set KUBE-CLUSTER-IP') && l.includes('KUBE-MARK-MASQ'));
    const prefix = '-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP';

    it.each<[string, Partial<IpvsIptablesOptions>, string]>([
      ['--masquerade-all marks every packet to a cluster IP:port', { masqueradeAll: true, localDetector: { kind: 'cidr', cidr: '10.0.0.0/8' } }, 'dst,dst -j KUBE-MARK-MASQ'],
      ['a cluster CIDR detector marks sources outside it', { localDetector: { kind: 'cidr', cidr: '10.0.0.0/8' } }, 'dst,dst ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ'],
      ['a bridge detector marks what does not come in on the bridge', { localDetector: { kind: 'bridge-interface', interfaceName: 'cbr0' } }, 'dst,dst ! -i cbr0 -j KUBE-MARK-MASQ'],
      ['an interface-prefix detector marks what does not come in on such an interface', { localDetector: { kind: 'interface-name-prefix', prefix: 'veth' } }, 'dst,dst ! -i veth+ -j KUBE-MARK-MASQ'],
      ['without a detector only node-originated packets from a VIP (src,dst) are marked', { localDetector: { kind: 'none' } }, 'src,dst -j KUBE-MARK-MASQ'],
    ])('%s', (_label, o, tail) => {
      expect(clusterRule(o)).toBe(`${prefix} ${tail}`);
    });
  });

  it('uses the masquerade bit for every mark (bit 0 → 0x00000001)', () => {
    const payload = render(new TestCluster().state(), { masqueradeBit: 0 });
    expect(payload).toContain('-A KUBE-MARK-MASQ -j MARK --or-mark 0x00000001\n');
    expect(payload).toContain('-m mark ! --mark 0x00000001/0x00000001 -j RETURN\n');
    expect(payload).toContain('-m mark --mark 0x00000001/0x00000001 -j ACCEPT\n');
    expect(payload).not.toContain('0x00004000');
  });

  it('writes a set-match rule only for sets with entries: hairpin only with local endpoints, UDP and SCTP node ports per protocol', () => {
    const c = new TestCluster();
    c.service(makeService('ns1', 'svc1', (svc) => {
      svc.spec.type = 'NodePort';
      svc.spec.clusterIP = SVC_IP;
      svc.spec.ports = [
        { name: 'dns', port: 53, protocol: 'UDP', nodePort: 30053 },
        { name: 'sctp', port: 36412, protocol: 'SCTP', nodePort: 30412 },
      ];
    }));
    c.endpoints('ns1/svc1:dns', [{ ip: '10.180.0.1', port: 53 }]);
    const remoteOnly = render(c.state());
    expect(remoteOnly).not.toContain('KUBE-LOOP-BACK');
    expect(chainRules(remoteOnly, 'KUBE-NODE-PORT').slice(0, 2)).toEqual([
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-NODE-PORT-UDP' },
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-NODE-PORT-SCTP-HASH' },
    ]);
    expect(remoteOnly).toContain('-A KUBE-NODE-PORT -p udp -m comment --comment "Kubernetes nodeport UDP port for masquerade purpose" -m set --match-set KUBE-NODE-PORT-UDP dst -j KUBE-MARK-MASQ\n');
    expect(remoteOnly).toContain(
      '-A KUBE-NODE-PORT -p sctp -m comment --comment "Kubernetes nodeport SCTP port for masquerade purpose with type \'hash ip:port\'" -m set --match-set KUBE-NODE-PORT-SCTP-HASH dst,dst -j KUBE-MARK-MASQ\n',
    );
    c.endpoints('ns1/svc1:dns', [{ ip: '10.180.0.1', port: 53, nodeName: 'test-hostname' }]);
    expect(chainRules(render(c.state()), 'KUBE-POSTROUTING')[0]).toEqual({ jump: 'MASQUERADE', matchSet: 'KUBE-LOOP-BACK' });
  });

  describe('LB access from the node itself (lbNoNodeAccess, kubernetes#119656)', () => {
    const firewalled = cluster(loadBalancer((svc) => (svc.spec.loadBalancerSourceRanges = ['100.101.0.0/16', '10.0.0.0/8'])));
    const outFilter = (p: string) => tableLines(p, 'filter').filter((l) => l.startsWith('-A KUBE-IPVS-OUT-FILTER'));

    it('lets the node in through KUBE-LOAD-BALANCER-SOURCE-IP when a range holds the node IP, with no OUT-FILTER drop', () => {
      const payload = render(firewalled.state());
      expect(chainRules(payload, 'KUBE-SOURCE-RANGES-FIREWALL')).toEqual([
        { jump: 'RETURN', matchSet: 'KUBE-LOAD-BALANCER-SOURCE-CIDR' },
        { jump: 'RETURN', matchSet: 'KUBE-LOAD-BALANCER-SOURCE-IP' },
        { jump: 'DROP', matchSet: '' },
      ]);
      expect(outFilter(payload)).toEqual([]);
    });

    it('drops the node\'s own IPVS connections to the LB IP when no range holds the node IP (or it is unknown)', () => {
      const drop = ['-A KUBE-IPVS-OUT-FILTER -s 1.2.3.4 -m ipvs --vaddr 1.2.3.4 --vproto tcp --vport 80 -j DROP'];
      expect(outFilter(render(firewalled.state({ nodeIP: '192.168.0.1' })))).toEqual(drop);
      expect(outFilter(render(firewalled.state({ nodeIP: null })))).toEqual(drop);
    });

    it('writes no OUT-FILTER rule for LB IPs without source ranges', () => {
      expect(outFilter(render(cluster(loadBalancer()).state({ nodeIP: '192.168.0.1' })))).toEqual([]);
    });
  });

  it('IPv6: the KUBE-6- sets, ::1/128 for loopback sources, IPv6 LB addresses in OUT-FILTER', () => {
    const c = new TestCluster('IPv6');
    c.service(makeService('ns1', 'svc1', (svc) => {
      svc.spec.type = 'LoadBalancer';
      svc.spec.clusterIP = '2001:db8::10';
      svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
      svc.spec.loadBalancerSourceRanges = ['2001:db8:1::/64'];
      svc.status.loadBalancer = { ingress: [{ ip: '2001:db8::99' }] };
    }));
    const payload = render(c.state(), { localDetector: { kind: 'cidr', cidr: 'fd00:10:244::/48' } });
    expect(chainRules(payload, 'KUBE-SERVICES')).toEqual([
      { jump: 'RETURN', matchSet: '', source: '::1/128' },
      { jump: 'KUBE-LOAD-BALANCER', matchSet: 'KUBE-6-LOAD-BALANCER' },
      { jump: 'KUBE-MARK-MASQ', matchSet: 'KUBE-6-CLUSTER-IP' },
      { jump: 'KUBE-NODE-PORT', matchSet: '' },
      { jump: 'ACCEPT', matchSet: 'KUBE-6-CLUSTER-IP' },
      { jump: 'ACCEPT', matchSet: 'KUBE-6-LOAD-BALANCER' },
    ]);
    expect(payload).toContain('--match-set KUBE-6-CLUSTER-IP dst,dst ! -s fd00:10:244::/48 -j KUBE-MARK-MASQ\n');
    expect(payload).toContain('-A KUBE-IPVS-OUT-FILTER -s 2001:db8::99 -m ipvs --vaddr 2001:db8::99 --vproto tcp --vport 80 -j DROP\n');
    expect(payload).toContain('-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-6-IPVS-IPS dst -j REJECT\n');
    expect(payload).not.toMatch(/--match-set KUBE-(?!6-)/);
  });

  it('treats a set the state does not list as empty (the catalogue decides names, never the state)', () => {
    const state = new TestCluster().state();
    expect(render({ ...state, ipsets: [] })).toBe(EMPTY_STATE_PAYLOAD);
  });

  it('reports how many rules each table got', () => {
    const r = renderIpvsIptables(new TestCluster().state(), options());
    expect([r.natRules, r.filterRules]).toEqual([7, 10]);
  });

  describe('refuses before writing any text', () => {
    const state = cluster(svc1(() => undefined)).state();
    it.each<[string, Partial<IpvsIptablesOptions>]>([
      ['the other family', { family: 'IPv6' }],
      ['a masquerade bit out of range', { masqueradeBit: 32 }],
      ['a fractional masquerade bit', { masqueradeBit: 1.5 }],
      ['a cluster CIDR with a newline', { localDetector: { kind: 'cidr', cidr: '10.0.0.0/8\n-A KUBE-SERVICES -j ACCEPT' } as LocalTrafficDetector }],
      ['a cluster CIDR of the other family', { localDetector: { kind: 'cidr', cidr: 'fd00::/8' } }],
      ['a bridge name with a space', { localDetector: { kind: 'bridge-interface', interfaceName: 'br0 -j ACCEPT' } }],
      ['an interface prefix with a quote', { localDetector: { kind: 'interface-name-prefix', prefix: 'veth"' } }],
    ])('%s', (_label, o) => {
      expect(() => renderIpvsIptables(state, options(o))).toThrow(UnsafeRestoreTextError);
    });
  });
});
