/**
 * Upstream proxier_test.go tests that check behaviour by tracing packets through the restored
 * rules (runPacketFlowTests). The expectations (outputs, masquerading) are upstream's; the in-memory
 * iptables is a port of upstream's fake, and every flow is answered by the production tracer twice
 * (the engine, and the ModeTracer's PacketTrace over the same tables; ./testing/packet-tracer.ts).
 *
 * Source: kubernetes pkg/proxy/iptables/proxier_test.go, the newest copy that could be read for this
 * work (v1.32 or later; its commit is not known — commit edca5633aa54f69d9fa50f526fe3a8cabda69c91
 * could not be read, so it is not claimed). Every runPacketFlowTests call of that copy is here, flow
 * for flow (name, source, destination, port, protocol, output, masq): TestNoEndpointsReject,
 * TestClusterIPGeneral, TestLoadBalancer, TestNodePorts (7 cases), TestHealthCheckNodePort,
 * TestExternalTrafficPolicyLocal, TestExternalTrafficPolicyCluster, TestInternalTrafficPolicy (4
 * cases + endpoints deleted), TestTerminatingEndpointsTrafficPolicyLocal/Cluster (4 cases each +
 * endpoints deleted), TestInternalExternalMasquerade (30 flows x 4 cases). TestTracePacket's static
 * rules and flows are in ../trace/upstream-trace-packet.spec.ts.
 */
import { cidrContains } from '@kube-proxy/core';
import type { PacketFlowTest } from './testing/packet-tracer.js';
import {
  runPacketFlowTests,
  TEST_EXTERNAL_CLIENT,
  TEST_EXTERNAL_CLIENT_BLOCKED,
  TEST_NODE_IP,
  TEST_NODE_IP_ALT,
  TEST_NODE_IPS,
  TEST_NODE_IPV6,
  TEST_NODE_IPV6_ALT,
  TEST_NODE_NAME,
} from './testing/packet-tracer.js';
import type { TestEndpoint } from './testing/fake-proxier.js';
import { FakeProxier, makeTestService } from './testing/fake-proxier.js';
import { chainRules } from './testing/assertions.js';

function flows(fp: FakeProxier, tests: PacketFlowTest[]): void {
  expect(fp.lastRestoreError).toBeUndefined();
  expect(runPacketFlowTests(fp.ipt, TEST_NODE_IPS, tests)).toEqual([]);
}

describe('packet tracer sanity check', () => {
  it('traces a sync result like upstream TestTracePacket', () => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }]);
    fp.syncProxyRules();
    flows(fp, [
      { name: 'no match', sourceIP: '10.0.0.2', destIP: '10.0.0.3', destPort: 80, output: '' },
      { name: 'single endpoint', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80' },
    ]);
  });
});

describe('TestNoEndpointsReject', () => {
  it('rejects connections to a service with no endpoints on every address', () => {
    const fp = new FakeProxier();
    const svcIP = '172.30.0.41';
    const svcExternalIPs = '192.168.99.11';
    const svcLBIP = '1.2.3.4';
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = svcIP;
        svc.spec.externalIPs = [svcExternalIPs];
        svc.spec.ports = [{ name: 'p80', protocol: 'TCP', port: 80, nodePort: 3001 }];
        svc.status.loadBalancer = { ingress: [{ ip: svcLBIP }] };
      }),
    );
    fp.syncProxyRules();
    flows(fp, [
      { name: 'pod to cluster IP with no endpoints', sourceIP: '10.0.0.2', destIP: svcIP, destPort: 80, output: 'REJECT' },
      { name: 'external to external IP with no endpoints', sourceIP: TEST_EXTERNAL_CLIENT, destIP: svcExternalIPs, destPort: 80, output: 'REJECT' },
      { name: 'pod to NodePort with no endpoints', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: 'REJECT' },
      { name: 'external to NodePort with no endpoints', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: 'REJECT' },
      { name: 'pod to LoadBalancer IP with no endpoints', sourceIP: '10.0.0.2', destIP: svcLBIP, destPort: 80, output: 'REJECT' },
      { name: 'external to LoadBalancer IP with no endpoints', sourceIP: TEST_EXTERNAL_CLIENT, destIP: svcLBIP, destPort: 80, output: 'REJECT' },
    ]);
    // The REJECT rules upstream writes in filter KUBE-SERVICES / KUBE-EXTERNAL-SERVICES.
    expect(chainRules(fp.iptablesData, 'filter', 'KUBE-SERVICES')).toBe(
      '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j REJECT\n',
    );
    expect(chainRules(fp.iptablesData, 'filter', 'KUBE-EXTERNAL-SERVICES')).toBe(
      [
        '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp -d 192.168.99.11 --dport 80 -j REJECT',
        '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j REJECT',
        '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 3001 -j REJECT',
        '',
      ].join('\n'),
    );
  });
});

describe('TestClusterIPGeneral', () => {
  it('handles several ports, protocols and endpoints', () => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'http', port: 80, protocol: 'TCP' }];
      }),
    );
    fp.addService(
      makeTestService('ns2', 'svc2', (svc) => {
        svc.spec.clusterIP = '172.30.0.42';
        svc.spec.ports = [
          { name: 'http', port: 80, protocol: 'TCP' },
          { name: 'https', port: 443, protocol: 'TCP', targetPort: 8443 },
          { name: 'dns-udp', port: 53, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 5353 },
          { name: 'dns-sctp', port: 53, protocol: 'SCTP' },
        ];
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'http', 80, [{ ip: '10.180.0.1', nodeName: TEST_NODE_NAME }]);
    const svc2eps: TestEndpoint[] = [
      { ip: '10.180.0.1', nodeName: TEST_NODE_NAME },
      { ip: '10.180.2.1', nodeName: 'node2' },
    ];
    fp.setEndpoints('ns2', 'svc2', 'http', 80, svc2eps);
    fp.setEndpoints('ns2', 'svc2', 'https', 8443, svc2eps);
    fp.setEndpoints('ns2', 'svc2', 'dns-udp', 53, svc2eps);
    fp.setEndpoints('ns2', 'svc2', 'dns-tcp', 5353, svc2eps);
    fp.setEndpoints('ns2', 'svc2', 'dns-sctp', 53, svc2eps);
    fp.syncProxyRules();

    flows(fp, [
      { name: 'simple clusterIP', sourceIP: '10.180.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: false },
      { name: 'hairpin to cluster IP', sourceIP: '10.180.0.1', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: true },
      { name: 'clusterIP with multiple endpoints', sourceIP: '10.180.0.2', destIP: '172.30.0.42', destPort: 80, output: '10.180.0.1:80, 10.180.2.1:80', masq: false },
      { name: 'clusterIP with TargetPort', sourceIP: '10.180.0.2', destIP: '172.30.0.42', destPort: 443, output: '10.180.0.1:8443, 10.180.2.1:8443', masq: false },
      { name: 'clusterIP with TCP, UDP, and SCTP on same port (TCP)', sourceIP: '10.180.0.2', protocol: 'TCP', destIP: '172.30.0.42', destPort: 53, output: '10.180.0.1:5353, 10.180.2.1:5353', masq: false },
      { name: 'clusterIP with TCP, UDP, and SCTP on same port (UDP)', sourceIP: '10.180.0.2', protocol: 'UDP', destIP: '172.30.0.42', destPort: 53, output: '10.180.0.1:53, 10.180.2.1:53', masq: false },
      { name: 'clusterIP with TCP, UDP, and SCTP on same port (SCTP)', sourceIP: '10.180.0.2', protocol: 'SCTP', destIP: '172.30.0.42', destPort: 53, output: '10.180.0.1:53, 10.180.2.1:53', masq: false },
      { name: 'TCP-only port does not match UDP traffic', sourceIP: '10.180.0.2', protocol: 'UDP', destIP: '172.30.0.42', destPort: 80, output: '' },
      { name: "svc1 does not accept svc2's ports", sourceIP: '10.180.0.2', destIP: '172.30.0.41', destPort: 443, output: '' },
    ]);
  });

  it('splits traffic with upstream probabilities (1/n, 1/(n-1), ..., last unconditional)', () => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'UDP' }];
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }, { ip: '10.180.0.2' }, { ip: '10.180.0.3' }, { ip: '10.180.0.4' }]);
    fp.syncProxyRules();
    const rules = chainRules(fp.iptablesData, 'nat', fp.names.svc('ns1/svc1:p80', 'UDP')).split('\n');
    const sep = (ip: string) => fp.names.sep('ns1/svc1:p80', 'UDP', `${ip}:80`);
    const chain = fp.names.svc('ns1/svc1:p80', 'UDP');
    expect(rules).toEqual([
      `-A ${chain} -m comment --comment "ns1/svc1:p80 cluster IP" -m udp -p udp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ`,
      `-A ${chain} -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.2500000000 -j ${sep('10.180.0.1')}`,
      `-A ${chain} -m comment --comment "ns1/svc1:p80 -> 10.180.0.2:80" -m statistic --mode random --probability 0.3333333333 -j ${sep('10.180.0.2')}`,
      `-A ${chain} -m comment --comment "ns1/svc1:p80 -> 10.180.0.3:80" -m statistic --mode random --probability 0.5000000000 -j ${sep('10.180.0.3')}`,
      `-A ${chain} -m comment --comment "ns1/svc1:p80 -> 10.180.0.4:80" -j ${sep('10.180.0.4')}`,
      '',
    ]);
    expect(chainRules(fp.iptablesData, 'nat', sep('10.180.0.2'))).toBe(
      `-A ${sep('10.180.0.2')} -m comment --comment ns1/svc1:p80 -s 10.180.0.2 -j KUBE-MARK-MASQ\n` +
        `-A ${sep('10.180.0.2')} -m comment --comment ns1/svc1:p80 -m udp -p udp -j DNAT --to-destination 10.180.0.2:80\n`,
    );
  });
});

describe('TestLoadBalancer', () => {
  it('implements loadBalancerSourceRanges with KUBE-FW and KUBE-PROXY-FIREWALL', () => {
    const fp = new FakeProxier();
    const svcIP = '172.30.0.41';
    const svcLBIP1 = '1.2.3.4';
    const svcLBIP2 = '5.6.7.8';
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = svcIP;
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
        svc.status.loadBalancer = { ingress: [{ ip: svcLBIP1 }, { ip: svcLBIP2 }] };
        svc.spec.loadBalancerSourceRanges = [
          '192.168.0.0/24',
          // Regression test that excess whitespace gets ignored
          ' 203.0.113.0/25',
        ];
      }),
    );
    const epIP = '10.180.0.1';
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: epIP }]);
    fp.syncProxyRules();
    const ep = `${epIP}:80`;
    flows(fp, [
      { name: 'pod to cluster IP', sourceIP: '10.0.0.2', destIP: svcIP, destPort: 80, output: ep, masq: false },
      { name: 'external to nodePort', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: ep, masq: true },
      { name: 'nodePort bypasses LoadBalancerSourceRanges', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: TEST_NODE_IP, destPort: 3001, output: ep, masq: true },
      { name: 'accepted external to LB1', sourceIP: TEST_EXTERNAL_CLIENT, destIP: svcLBIP1, destPort: 80, output: ep, masq: true },
      { name: 'accepted external to LB2', sourceIP: TEST_EXTERNAL_CLIENT, destIP: svcLBIP2, destPort: 80, output: ep, masq: true },
      { name: 'blocked external to LB1', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: svcLBIP1, destPort: 80, output: 'DROP' },
      { name: 'blocked external to LB2', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: svcLBIP2, destPort: 80, output: 'DROP' },
      { name: 'pod to LB1 (blocked by LoadBalancerSourceRanges)', sourceIP: '10.0.0.2', destIP: svcLBIP1, destPort: 80, output: 'DROP' },
      { name: 'pod to LB2 (blocked by LoadBalancerSourceRanges)', sourceIP: '10.0.0.2', destIP: svcLBIP2, destPort: 80, output: 'DROP' },
      { name: 'node to LB1 (allowed by LoadBalancerSourceRanges)', sourceIP: TEST_NODE_IP, destIP: svcLBIP1, destPort: 80, output: ep, masq: true },
      { name: 'node to LB2 (allowed by LoadBalancerSourceRanges)', sourceIP: TEST_NODE_IP, destIP: svcLBIP2, destPort: 80, output: ep, masq: true },
      { name: 'same node to LB1, SNATted to LB1 (implicitly allowed)', sourceIP: svcLBIP1, destIP: svcLBIP1, destPort: 80, output: ep, masq: true },
      { name: 'same node to LB2, SNATted to LB2 (implicitly allowed)', sourceIP: svcLBIP2, destIP: svcLBIP2, destPort: 80, output: ep, masq: true },
    ]);
    // The firewall chain as upstream writes it (source ranges, then the node's LB IPs, then the comment-only tail).
    const fw = fp.names.fw('ns1/svc1:p80', 'TCP');
    const ext = fp.names.ext('ns1/svc1:p80', 'TCP');
    expect(chainRules(fp.iptablesData, 'nat', fw)).toBe(
      [
        `-A ${fw} -m comment --comment "ns1/svc1:p80 loadbalancer IP" -s 192.168.0.0/24 -j ${ext}`,
        `-A ${fw} -m comment --comment "ns1/svc1:p80 loadbalancer IP" -s 203.0.113.0/25 -j ${ext}`,
        `-A ${fw} -m comment --comment "ns1/svc1:p80 loadbalancer IP" -s 1.2.3.4 -j ${ext}`,
        `-A ${fw} -m comment --comment "ns1/svc1:p80 loadbalancer IP" -s 5.6.7.8 -j ${ext}`,
        `-A ${fw} -m comment --comment "other traffic to ns1/svc1:p80 will be dropped by KUBE-PROXY-FIREWALL"`,
        '',
      ].join('\n'),
    );
    expect(chainRules(fp.iptablesData, 'filter', 'KUBE-PROXY-FIREWALL')).toBe(
      [
        `-A KUBE-PROXY-FIREWALL -m comment --comment "ns1/svc1:p80 traffic not accepted by ${fw}" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP`,
        `-A KUBE-PROXY-FIREWALL -m comment --comment "ns1/svc1:p80 traffic not accepted by ${fw}" -m tcp -p tcp -d 5.6.7.8 --dport 80 -j DROP`,
        '',
      ].join('\n'),
    );
  });
});

// The node's interface addresses in upstream's NewFakeProxier (lo + eth0), and a port of
// NodePortAddresses.GetNodeIPs over them: what the proxier resolves `nodePortAddresses` to.
const FAKE_INTERFACE_IPS = ['127.0.0.1', '::1', TEST_NODE_IP, TEST_NODE_IP_ALT, '192.168.99.11', TEST_NODE_IPV6, TEST_NODE_IPV6_ALT];
function nodePortAddresses(family: 'IPv4' | 'IPv6', cidrs: string[] | null): { all: true } | { all: false; ips: string[] } {
  const ofFamily = (cidrs ?? []).filter((c) => c.includes(':') === (family === 'IPv6'));
  if (ofFamily.length === 0 || ofFamily.some((c) => c === '0.0.0.0/0' || c === '::/0')) return { all: true };
  const ips = new Set<string>();
  for (const cidr of ofFamily) for (const ip of FAKE_INTERFACE_IPS) if (cidrContains(cidr, ip)) ips.add(ip);
  return { all: false, ips: [...ips] };
}

describe('TestNodePorts', () => {
  const testCases: Array<{
    name: string;
    family: 'IPv4' | 'IPv6';
    localhostNodePorts: boolean;
    nodePortAddresses: string[] | null;
    allowAltNodeIP: boolean;
    expectFirewall: boolean;
  }> = [
    { name: 'ipv4, localhost-nodeports enabled', family: 'IPv4', localhostNodePorts: true, nodePortAddresses: null, allowAltNodeIP: true, expectFirewall: true },
    { name: 'ipv4, localhost-nodeports disabled', family: 'IPv4', localhostNodePorts: false, nodePortAddresses: null, allowAltNodeIP: true, expectFirewall: false },
    {
      name: 'ipv4, localhost-nodeports disabled, localhost in nodeport-addresses',
      family: 'IPv4',
      localhostNodePorts: false,
      nodePortAddresses: ['192.168.0.0/24', '127.0.0.1/32'],
      allowAltNodeIP: false,
      expectFirewall: false,
    },
    {
      name: 'ipv4, localhost-nodeports enabled, multiple nodeport-addresses',
      family: 'IPv4',
      localhostNodePorts: false,
      nodePortAddresses: ['192.168.0.0/24', '192.168.1.0/24', '2001:db8::/64'],
      allowAltNodeIP: true,
      expectFirewall: false,
    },
    { name: 'ipv6, localhost-nodeports enabled', family: 'IPv6', localhostNodePorts: true, nodePortAddresses: null, allowAltNodeIP: true, expectFirewall: false },
    { name: 'ipv6, localhost-nodeports disabled', family: 'IPv6', localhostNodePorts: false, nodePortAddresses: null, allowAltNodeIP: true, expectFirewall: false },
    {
      name: 'ipv6, localhost-nodeports disabled, multiple nodeport-addresses',
      family: 'IPv6',
      localhostNodePorts: false,
      nodePortAddresses: ['192.168.0.0/24', '192.168.1.0/24', '2001:db8::/64'],
      allowAltNodeIP: false,
      expectFirewall: false,
    },
  ];

  it.each(testCases)('$name', (tc) => {
    const v4 = tc.family === 'IPv4';
    const svcIP = v4 ? '172.30.0.41' : 'fd00:172:30::41';
    const epIP1 = v4 ? '10.180.0.1' : 'fd00:10:180::1';
    const epIP2 = v4 ? '10.180.2.1' : 'fd00:10:180::2:1';
    const fp = new FakeProxier(tc.family, {
      localhostNodePorts: tc.localhostNodePorts,
      nodePortAddresses: nodePortAddresses(tc.family, tc.nodePortAddresses),
    });
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'NodePort';
        svc.spec.clusterIP = svcIP;
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: epIP1 }, { ip: epIP2, nodeName: TEST_NODE_NAME }]);
    fp.syncProxyRules();

    const podIP = v4 ? '10.0.0.2' : 'fd00:10::2';
    const externalClientIP = v4 ? TEST_EXTERNAL_CLIENT : '2600:5200::1';
    const nodeIP = v4 ? TEST_NODE_IP : TEST_NODE_IPV6;
    const altNodeIP = v4 ? TEST_NODE_IP_ALT : TEST_NODE_IPV6_ALT;
    const localhostIP = v4 ? '127.0.0.1' : '::1';
    const hp = (ip: string) => (ip.includes(':') ? `[${ip}]:80` : `${ip}:80`);
    // Upstream's tracer takes the DNAT destination up to the first ':' as the new destination IP.
    const output = `${hp(epIP1)}, ${hp(epIP2)}`;

    // Basic tests are the same for all cases
    flows(fp, [
      { name: 'pod to cluster IP', sourceIP: podIP, destIP: svcIP, destPort: 80, output, masq: false },
      { name: 'external to nodePort', sourceIP: externalClientIP, destIP: nodeIP, destPort: 3001, output, masq: true },
      { name: 'node to nodePort', sourceIP: nodeIP, destIP: nodeIP, destPort: 3001, output, masq: true },
    ]);

    // localhost to NodePort is only allowed in IPv4, and only if not disabled
    if (v4 && tc.localhostNodePorts) {
      flows(fp, [{ name: 'localhost to nodePort gets masqueraded', sourceIP: localhostIP, destIP: localhostIP, destPort: 3001, output, masq: true }]);
    } else {
      flows(fp, [{ name: 'localhost to nodePort is ignored', sourceIP: localhostIP, destIP: localhostIP, destPort: 3001, output: '' }]);
    }

    // NodePort on altNodeIP should be allowed, unless nodePortAddressess excludes altNodeIP
    if (tc.allowAltNodeIP) {
      flows(fp, [{ name: 'external to nodePort on secondary IP', sourceIP: externalClientIP, destIP: altNodeIP, destPort: 3001, output, masq: true }]);
    } else {
      flows(fp, [{ name: 'secondary nodeIP ignores NodePorts', sourceIP: externalClientIP, destIP: altNodeIP, destPort: 3001, output: '' }]);
    }

    // The firewall rule is checked by hand (the tracer does not implement conntrack states).
    const expected = tc.expectFirewall
      ? '-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP\n'
      : '';
    expect(chainRules(fp.iptablesData, 'filter', 'KUBE-FIREWALL')).toBe(expected);
  });

  // The nodeports tail rule of KUBE-SERVICES, per case, from upstream's syncProxyRules.
  it.each([
    ['IPv4', true, null, ['-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS']],
    ['IPv4', false, null, ['-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS']],
    ['IPv6', true, null, ['-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS']],
    [
      'IPv4',
      false,
      ['192.168.0.0/24', '127.0.0.1/32'],
      ['-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 192.168.0.2 -j KUBE-NODEPORTS'],
    ],
    [
      'IPv4',
      true,
      ['192.168.0.0/24', '127.0.0.1/32'],
      [
        '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 127.0.0.1 -j KUBE-NODEPORTS',
        '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 192.168.0.2 -j KUBE-NODEPORTS',
      ],
    ],
    [
      'IPv6',
      false,
      ['192.168.0.0/24', '192.168.1.0/24', '2001:db8::/64', '::1/128'],
      ['-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 2001:db8::1 -j KUBE-NODEPORTS'],
    ],
  ] as const)('%s localhostNodePorts=%s nodePortAddresses=%j', (family, localhost, cidrs, expected) => {
    const fp = new FakeProxier(family, { localhostNodePorts: localhost, nodePortAddresses: nodePortAddresses(family, cidrs === null ? null : [...cidrs]) });
    fp.syncProxyRules();
    const rules = chainRules(fp.iptablesData, 'nat', 'KUBE-SERVICES').split('\n').filter((l) => l !== '');
    expect(rules.sort()).toEqual([...expected].sort());
  });
});

describe('TestHealthCheckNodePort', () => {
  it('accepts the health check node port, and stops when the service goes away', () => {
    const fp = new FakeProxier('IPv4', { nodePortAddresses: nodePortAddresses('IPv4', ['127.0.0.0/8']) });
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = '172.30.0.42';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
        svc.spec.healthCheckNodePort = 30000;
        svc.spec.externalTrafficPolicy = 'Local';
      }),
    );
    fp.syncProxyRules();
    flows(fp, [{ name: 'firewall accepts HealthCheckNodePort', sourceIP: '1.2.3.4', destIP: TEST_NODE_IP, destPort: 30000, output: 'ACCEPT', masq: false }]);

    fp.deleteService('ns1', 'svc1');
    fp.syncProxyRules();
    flows(fp, [{ name: 'HealthCheckNodePort no longer has any rule', sourceIP: '1.2.3.4', destIP: TEST_NODE_IP, destPort: 30000, output: '' }]);
  });
});

function lbService(policy: 'Local' | 'Cluster') {
  return makeTestService('ns1', 'svc1', (svc) => {
    svc.spec.type = 'LoadBalancer';
    svc.spec.externalTrafficPolicy = policy;
    svc.spec.clusterIP = '172.30.0.41';
    svc.spec.externalIPs = ['192.168.99.11'];
    svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001, targetPort: 80 }];
    if (policy === 'Local') svc.spec.healthCheckNodePort = 30000;
    svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
  });
}

describe('TestExternalTrafficPolicyLocal', () => {
  it('does not masquerade external traffic and short-circuits pod traffic', () => {
    const fp = new FakeProxier();
    fp.addService(lbService('Local'));
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }, { ip: '10.180.2.1', nodeName: TEST_NODE_NAME }]);
    fp.syncProxyRules();
    const both = '10.180.0.1:80, 10.180.2.1:80';
    const local = '10.180.2.1:80';
    flows(fp, [
      { name: 'pod to cluster IP hits both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: both, masq: false },
      { name: 'pod to external IP hits both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: '192.168.99.11', destPort: 80, output: both, masq: false },
      { name: 'external to external IP hits only local endpoint, unmasqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.11', destPort: 80, output: local, masq: false },
      { name: 'pod to LB IP hits only both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: both, masq: false },
      { name: 'external to LB IP hits only local endpoint, unmasqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: local, masq: false },
      { name: 'pod to NodePort hits both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: both, masq: false },
      { name: 'external to NodePort hits only local endpoint, unmasqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: local, masq: false },
    ]);
    // KUBE-EXT + KUBE-SVL as upstream writes them.
    const ext = fp.names.ext('ns1/svc1:p80', 'TCP');
    const svcChain = fp.names.svc('ns1/svc1:p80', 'TCP');
    const svl = fp.names.svl('ns1/svc1:p80', 'TCP');
    expect(chainRules(fp.iptablesData, 'nat', ext)).toBe(
      [
        `-A ${ext} -m comment --comment "pod traffic for ns1/svc1:p80 external destinations" -s 10.0.0.0/8 -j ${svcChain}`,
        `-A ${ext} -m comment --comment "masquerade LOCAL traffic for ns1/svc1:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
        `-A ${ext} -m comment --comment "route LOCAL traffic for ns1/svc1:p80 external destinations" -m addrtype --src-type LOCAL -j ${svcChain}`,
        `-A ${ext} -j ${svl}`,
        '',
      ].join('\n'),
    );
    expect(chainRules(fp.iptablesData, 'nat', svl)).toBe(
      `-A ${svl} -m comment --comment "ns1/svc1:p80 -> 10.180.2.1:80" -j ${fp.names.sep('ns1/svc1:p80', 'TCP', '10.180.2.1:80')}\n`,
    );
    expect(chainRules(fp.iptablesData, 'filter', 'KUBE-NODEPORTS')).toBe(
      '-A KUBE-NODEPORTS -m comment --comment "ns1/svc1:p80 health check node port" -m tcp -p tcp --dport 30000 -j ACCEPT\n',
    );
  });

  it('with no local endpoints: DROP external traffic, keep short-circuiting pod and node traffic', () => {
    const fp = new FakeProxier();
    fp.addService(lbService('Local'));
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1', nodeName: 'node2' }]);
    const result = fp.syncProxyRules();
    expect(result.noLocalEndpoints).toEqual({ internal: 0, external: 1 });
    flows(fp, [
      { name: 'pod to cluster IP', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: false },
      { name: 'pod to LB IP is short-circuited', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: '10.180.0.1:80', masq: false },
      { name: 'node to LB IP is short-circuited', sourceIP: TEST_NODE_IP, destIP: '1.2.3.4', destPort: 80, output: '10.180.0.1:80', masq: true },
      { name: 'external to LB IP is dropped', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'DROP' },
      { name: 'external to external IP is dropped', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.11', destPort: 80, output: 'DROP' },
      { name: 'external to NodePort is dropped', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: 'DROP' },
    ]);
    const ext = fp.names.ext('ns1/svc1:p80', 'TCP');
    // No "-j KUBE-SVL-..." tail: hasExternalEndpoints is false, and no SVL chain is written.
    expect(chainRules(fp.iptablesData, 'nat', ext)).not.toContain('KUBE-SVL-');
    expect(fp.iptablesData).not.toContain(':KUBE-SVL-');
    expect(chainRules(fp.iptablesData, 'filter', 'KUBE-EXTERNAL-SERVICES')).toBe(
      [
        '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no local endpoints" -m tcp -p tcp -d 192.168.99.11 --dport 80 -j DROP',
        '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no local endpoints" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP',
        '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no local endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 3001 -j DROP',
        '',
      ].join('\n'),
    );
  });
});

describe('TestExternalTrafficPolicyCluster', () => {
  it('masquerades external traffic', () => {
    const fp = new FakeProxier();
    fp.addService(lbService('Cluster'));
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }, { ip: '10.180.2.1', nodeName: TEST_NODE_NAME }]);
    fp.syncProxyRules();
    const both = '10.180.0.1:80, 10.180.2.1:80';
    flows(fp, [
      { name: 'pod to cluster IP hits both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: both, masq: false },
      { name: 'pod to external IP hits both endpoints, masqueraded', sourceIP: '10.0.0.2', destIP: '192.168.99.11', destPort: 80, output: both, masq: true },
      { name: 'external to external IP hits both endpoints, masqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.11', destPort: 80, output: both, masq: true },
      { name: 'pod to LB IP hits both endpoints, masqueraded', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: both, masq: true },
      { name: 'external to LB IP hits both endpoints, masqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: both, masq: true },
      { name: 'pod to NodePort hits both endpoints, masqueraded', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: both, masq: true },
      { name: 'external to NodePort hits both endpoints, masqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: both, masq: true },
    ]);
  });
});

describe('TestInternalTrafficPolicy', () => {
  const cases: Array<{ name: string; itp: 'Cluster' | 'Local'; endpoints: Array<[string, string]>; flow: PacketFlowTest }> = [
    {
      name: 'internalTrafficPolicy is cluster',
      itp: 'Cluster',
      endpoints: [['10.0.1.1', TEST_NODE_NAME], ['10.0.1.2', 'node1'], ['10.0.1.3', 'node2']],
      flow: { name: 'pod to ClusterIP hits all endpoints', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: '10.0.1.1:80, 10.0.1.2:80, 10.0.1.3:80', masq: false },
    },
    {
      name: 'internalTrafficPolicy is local and there is one local endpoint',
      itp: 'Local',
      endpoints: [['10.0.1.1', TEST_NODE_NAME], ['10.0.1.2', 'node1'], ['10.0.1.3', 'node2']],
      flow: { name: 'pod to ClusterIP hits only local endpoint', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: '10.0.1.1:80', masq: false },
    },
    {
      name: 'internalTrafficPolicy is local and there are multiple local endpoints',
      itp: 'Local',
      endpoints: [['10.0.1.1', TEST_NODE_NAME], ['10.0.1.2', TEST_NODE_NAME], ['10.0.1.3', 'node2']],
      flow: { name: 'pod to ClusterIP hits all local endpoints', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: '10.0.1.1:80, 10.0.1.2:80', masq: false },
    },
    {
      name: 'internalTrafficPolicy is local and there are no local endpoints',
      itp: 'Local',
      endpoints: [['10.0.1.1', 'node0'], ['10.0.1.2', 'node1'], ['10.0.1.3', 'node2']],
      flow: { name: 'no endpoints', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: 'DROP' },
    },
  ];
  it.each(cases)('$name', (tc) => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.clusterIP = '172.30.1.1';
        svc.spec.selector = { foo: 'bar' };
        svc.spec.ports = [{ name: '', port: 80, protocol: 'TCP' }];
        svc.spec.internalTrafficPolicy = tc.itp;
      }),
    );
    fp.setEndpoints('ns1', 'svc1', '', 80, tc.endpoints.map(([ip, nodeName]) => ({ ip, nodeName, ready: true })));
    fp.syncProxyRules();
    flows(fp, [tc.flow]);

    fp.deleteEndpoints('ns1', 'svc1', '');
    fp.syncProxyRules();
    flows(fp, [{ name: 'endpoints deleted', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: 'REJECT' }]);
  });

  it('writes the DROP rule and the SVL chain as upstream', () => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.clusterIP = '172.30.1.1';
        svc.spec.ports = [{ name: '', port: 80, protocol: 'TCP' }];
        svc.spec.internalTrafficPolicy = 'Local';
      }),
    );
    fp.setEndpoints('ns1', 'svc1', '', 80, [{ ip: '10.0.1.1', nodeName: 'node0' }]);
    fp.syncProxyRules();
    expect(chainRules(fp.iptablesData, 'filter', 'KUBE-SERVICES')).toBe(
      '-A KUBE-SERVICES -m comment --comment "ns1/svc1 has no local endpoints" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j DROP\n',
    );
    fp.setEndpoints('ns1', 'svc1', '', 80, [{ ip: '10.0.1.1', nodeName: TEST_NODE_NAME }]);
    fp.syncProxyRules();
    const svl = fp.names.svl('ns1/svc1', 'TCP');
    expect(chainRules(fp.iptablesData, 'nat', 'KUBE-SERVICES').split('\n')[0]).toBe(
      `-A KUBE-SERVICES -m comment --comment "ns1/svc1 cluster IP" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j ${svl}`,
    );
    expect(chainRules(fp.iptablesData, 'nat', svl)).toBe(
      `-A ${svl} -m comment --comment "ns1/svc1 cluster IP" -m tcp -p tcp -d 172.30.1.1 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ\n` +
        `-A ${svl} -m comment --comment "ns1/svc1 -> 10.0.1.1:80" -j ${fp.names.sep('ns1/svc1', 'TCP', '10.0.1.1:80')}\n`,
    );
    expect(fp.iptablesData).not.toContain(':KUBE-SVC-');
  });
});

function terminatingService(policy: 'Local' | 'Cluster') {
  return makeTestService('ns1', 'svc1', (svc) => {
    svc.spec.clusterIP = '172.30.1.1';
    svc.spec.type = 'LoadBalancer';
    svc.spec.externalTrafficPolicy = policy;
    svc.spec.ports = [{ name: '', targetPort: 80, port: 80, protocol: 'TCP' }];
    svc.spec.healthCheckNodePort = 30000;
    svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
  });
}

const afterDelete: PacketFlowTest[] = [
  { name: 'pod to clusterIP after endpoints deleted', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: 'REJECT' },
  { name: 'external to LB after endpoints deleted', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'REJECT' },
];

describe('TestTerminatingEndpointsTrafficPolicyLocal', () => {
  const cases: Array<{ name: string; endpoints: TestEndpoint[]; flows: PacketFlowTest[] }> = [
    {
      name: 'ready endpoints exist',
      endpoints: [
        { ip: '10.0.1.1', ready: true, serving: true, terminating: false, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.2', ready: true, serving: true, terminating: false, nodeName: TEST_NODE_NAME },
        // ignored for external since there are ready non-terminating endpoints
        { ip: '10.0.1.3', ready: false, serving: true, terminating: true, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.4', ready: false, serving: false, terminating: true, nodeName: TEST_NODE_NAME },
        // ignored for external since it's not local
        { ip: '10.0.1.5', ready: true, serving: true, terminating: false, nodeName: 'node-1' },
      ],
      flows: [
        { name: 'pod to clusterIP', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: '10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80', masq: false },
        { name: 'external to LB', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.0.1.1:80, 10.0.1.2:80', masq: false },
      ],
    },
    {
      name: 'only terminating endpoints exist',
      endpoints: [
        { ip: '10.0.1.2', ready: false, serving: true, terminating: true, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.3', ready: false, serving: true, terminating: true, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.4', ready: false, serving: false, terminating: true, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.5', ready: true, serving: true, terminating: false, nodeName: 'node-1' },
      ],
      flows: [
        { name: 'pod to clusterIP', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: '10.0.1.5:80', masq: false },
        { name: 'external to LB', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.0.1.2:80, 10.0.1.3:80', masq: false },
      ],
    },
    {
      name: 'terminating endpoints on remote node',
      endpoints: [{ ip: '10.0.1.5', ready: false, serving: true, terminating: true, nodeName: 'node-1' }],
      flows: [
        { name: 'pod to clusterIP', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: '10.0.1.5:80' },
        { name: 'external to LB, no locally-usable endpoints', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'DROP' },
      ],
    },
    {
      name: 'no usable endpoints on any node',
      endpoints: [
        { ip: '10.0.1.5', ready: false, serving: false, terminating: true, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.5', ready: false, serving: false, terminating: true, nodeName: 'node-1' },
      ],
      flows: [
        { name: 'pod to clusterIP, no usable endpoints', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: 'REJECT' },
        { name: 'external to LB, no usable endpoints', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'REJECT' },
      ],
    },
  ];
  it.each(cases)('$name', (tc) => {
    const fp = new FakeProxier();
    fp.addService(terminatingService('Local'));
    fp.setEndpoints('ns1', 'svc1', '', 80, tc.endpoints);
    fp.syncProxyRules();
    flows(fp, tc.flows);
    fp.deleteEndpoints('ns1', 'svc1', '');
    fp.syncProxyRules();
    flows(fp, afterDelete);
  });
});

describe('TestTerminatingEndpointsTrafficPolicyCluster', () => {
  const cases: Array<{ name: string; endpoints: TestEndpoint[]; flows: PacketFlowTest[] }> = [
    {
      name: 'ready endpoints exist',
      endpoints: [
        { ip: '10.0.1.1', ready: true, serving: true, terminating: false, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.2', ready: true, serving: true, terminating: false, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.3', ready: false, serving: true, terminating: true, nodeName: 'another-node' },
        { ip: '10.0.1.4', ready: false, serving: false, terminating: true, nodeName: 'another-node' },
        { ip: '10.0.1.5', ready: true, serving: true, terminating: false, nodeName: 'another-node' },
      ],
      flows: [
        { name: 'pod to clusterIP', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: '10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80', masq: false },
        { name: 'external to LB', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80', masq: true },
      ],
    },
    {
      name: 'only terminating endpoints exist',
      endpoints: [
        { ip: '10.0.1.2', ready: false, serving: true, terminating: true, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.3', ready: false, serving: true, terminating: true, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.4', ready: false, serving: false, terminating: true, nodeName: 'another-node' },
        { ip: '10.0.1.5', ready: false, serving: true, terminating: true, nodeName: 'another-node' },
      ],
      flows: [
        { name: 'pod to clusterIP', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: '10.0.1.2:80, 10.0.1.3:80, 10.0.1.5:80', masq: false },
        { name: 'external to LB', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.0.1.2:80, 10.0.1.3:80, 10.0.1.5:80', masq: true },
      ],
    },
    {
      name: 'terminating endpoints on remote node',
      endpoints: [{ ip: '10.0.1.5', ready: false, serving: true, terminating: true, nodeName: 'node-1' }],
      flows: [
        { name: 'pod to clusterIP', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: '10.0.1.5:80', masq: false },
        { name: 'external to LB', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.0.1.5:80', masq: true },
      ],
    },
    {
      name: 'no usable endpoints on any node',
      endpoints: [
        { ip: '10.0.1.5', ready: false, serving: false, terminating: true, nodeName: TEST_NODE_NAME },
        { ip: '10.0.1.5', ready: false, serving: false, terminating: true, nodeName: 'node-1' },
      ],
      flows: [
        { name: 'pod to clusterIP', sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output: 'REJECT' },
        { name: 'external to LB', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'REJECT' },
      ],
    },
  ];
  it.each(cases)('$name', (tc) => {
    const fp = new FakeProxier();
    fp.addService(terminatingService('Cluster'));
    fp.setEndpoints('ns1', 'svc1', '', 80, tc.endpoints);
    fp.syncProxyRules();
    flows(fp, tc.flows);
    fp.deleteEndpoints('ns1', 'svc1', '');
    fp.syncProxyRules();
    flows(fp, afterDelete);
  });
});

describe('TestInternalExternalMasquerade', () => {
  function setupTest(fp: FakeProxier): void {
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
        svc.spec.healthCheckNodePort = 30001;
        svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
      }),
    );
    fp.addService(
      makeTestService('ns2', 'svc2', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = '172.30.0.42';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3002 }];
        svc.spec.healthCheckNodePort = 30002;
        svc.spec.externalTrafficPolicy = 'Local';
        svc.status.loadBalancer = { ingress: [{ ip: '5.6.7.8' }] };
      }),
    );
    fp.addService(
      makeTestService('ns3', 'svc3', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = '172.30.0.43';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3003 }];
        svc.spec.healthCheckNodePort = 30003;
        svc.spec.internalTrafficPolicy = 'Local';
        svc.status.loadBalancer = { ingress: [{ ip: '9.10.11.12' }] };
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1', nodeName: TEST_NODE_NAME }, { ip: '10.180.1.1', nodeName: 'remote' }]);
    fp.setEndpoints('ns2', 'svc2', 'p80', 80, [{ ip: '10.180.0.2', nodeName: TEST_NODE_NAME }, { ip: '10.180.1.2', nodeName: 'remote' }]);
    fp.setEndpoints('ns3', 'svc3', 'p80', 80, [{ ip: '10.180.0.3', nodeName: TEST_NODE_NAME }, { ip: '10.180.1.3', nodeName: 'remote' }]);
    fp.syncProxyRules();
  }

  // The "output" and "masq" values represent the normal case (working localDetector, no masqueradeAll).
  const flowTests: PacketFlowTest[] = [
    { name: 'pod to ClusterIP', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: false },
    { name: 'pod to NodePort', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'pod to LB', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'node to ClusterIP', sourceIP: TEST_NODE_IP, destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'node to NodePort', sourceIP: TEST_NODE_IP, destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'localhost to NodePort', sourceIP: '127.0.0.1', destIP: '127.0.0.1', destPort: 3001, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'node to LB', sourceIP: TEST_NODE_IP, destIP: '1.2.3.4', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'external to ClusterIP', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'external to NodePort', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'external to LB', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'pod to ClusterIP with eTP:Local', sourceIP: '10.0.0.2', destIP: '172.30.0.42', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80', masq: false },
    { name: 'pod to NodePort with eTP:Local', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3002, output: '10.180.0.2:80, 10.180.1.2:80', masq: false },
    { name: 'pod to LB with eTP:Local', sourceIP: '10.0.0.2', destIP: '5.6.7.8', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80', masq: false },
    { name: 'node to ClusterIP with eTP:Local', sourceIP: TEST_NODE_IP, destIP: '172.30.0.42', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80', masq: true },
    { name: 'node to NodePort with eTP:Local', sourceIP: TEST_NODE_IP, destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
    { name: 'localhost to NodePort with eTP:Local', sourceIP: '127.0.0.1', destIP: '127.0.0.1', destPort: 3002, output: '10.180.0.2:80, 10.180.1.2:80', masq: true },
    { name: 'node to LB with eTP:Local', sourceIP: TEST_NODE_IP, destIP: '5.6.7.8', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80', masq: true },
    { name: 'external to ClusterIP with eTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '172.30.0.42', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80', masq: true },
    { name: 'external to NodePort with eTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3002, output: '10.180.0.2:80', masq: false },
    { name: 'external to LB with eTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '5.6.7.8', destPort: 80, output: '10.180.0.2:80', masq: false },
    { name: 'pod to ClusterIP with iTP:Local', sourceIP: '10.0.0.2', destIP: '172.30.0.43', destPort: 80, output: '10.180.0.3:80', masq: false },
    { name: 'pod to NodePort with iTP:Local', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3003, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
    { name: 'pod to LB with iTP:Local', sourceIP: '10.0.0.2', destIP: '9.10.11.12', destPort: 80, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
    { name: 'node to ClusterIP with iTP:Local', sourceIP: TEST_NODE_IP, destIP: '172.30.0.43', destPort: 80, output: '10.180.0.3:80', masq: true },
    { name: 'node to NodePort with iTP:Local', sourceIP: TEST_NODE_IP, destIP: TEST_NODE_IP, destPort: 3003, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
    { name: 'localhost to NodePort with iTP:Local', sourceIP: '127.0.0.1', destIP: '127.0.0.1', destPort: 3003, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
    { name: 'node to LB with iTP:Local', sourceIP: TEST_NODE_IP, destIP: '9.10.11.12', destPort: 80, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
    { name: 'external to ClusterIP with iTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '172.30.0.43', destPort: 80, output: '10.180.0.3:80', masq: true },
    { name: 'external to NodePort with iTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3003, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
    { name: 'external to LB with iTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '9.10.11.12', destPort: 80, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
  ];

  type Override = { output?: string; masq?: boolean };
  const noDetectorOverrides: Record<string, Override> = {
    // With no LocalTrafficDetector, all traffic to a ClusterIP is assumed to be from a pod, and thus to not require masquerading.
    'node to ClusterIP': { masq: false },
    'node to ClusterIP with eTP:Local': { masq: false },
    'node to ClusterIP with iTP:Local': { masq: false },
    'external to ClusterIP': { masq: false },
    'external to ClusterIP with eTP:Local': { masq: false },
    'external to ClusterIP with iTP:Local': { masq: false },
    // And there's no eTP:Local short-circuit for pod traffic, so pods get only the local endpoints.
    'pod to NodePort with eTP:Local': { output: '10.180.0.2:80' },
    'pod to LB with eTP:Local': { output: '10.180.0.2:80' },
  };
  const masqueradeAllOverrides: Record<string, Override> = {
    // All "to ClusterIP" traffic gets masqueraded when using --masquerade-all.
    'pod to ClusterIP': { masq: true },
    'pod to ClusterIP with eTP:Local': { masq: true },
    'pod to ClusterIP with iTP:Local': { masq: true },
  };
  const testCases: Array<{ name: string; masqueradeAll: boolean; localDetector: boolean; overrides: Record<string, Override> }> = [
    { name: 'base', masqueradeAll: false, localDetector: true, overrides: {} },
    { name: 'no LocalTrafficDetector', masqueradeAll: false, localDetector: false, overrides: noDetectorOverrides },
    { name: 'masqueradeAll', masqueradeAll: true, localDetector: true, overrides: masqueradeAllOverrides },
    {
      name: 'masqueradeAll, no LocalTrafficDetector',
      masqueradeAll: true,
      localDetector: false,
      overrides: {
        ...masqueradeAllOverrides,
        'pod to NodePort with eTP:Local': { output: '10.180.0.2:80' },
        'pod to LB with eTP:Local': { output: '10.180.0.2:80' },
      },
    },
  ];

  it.each(testCases)('$name', (tc) => {
    const fp = new FakeProxier('IPv4', {
      masqueradeAll: tc.masqueradeAll,
      ...(tc.localDetector ? {} : { localDetector: { kind: 'none' as const } }),
    });
    setupTest(fp);
    let applied = 0;
    const tcFlows = flowTests.map((f) => {
      const o = tc.overrides[f.name];
      if (o === undefined) return f;
      applied++;
      return { ...f, ...(o.output !== undefined ? { output: o.output } : {}), ...(o.masq !== undefined ? { masq: o.masq } : {}) };
    });
    expect(applied).toBe(Object.keys(tc.overrides).length);
    flows(fp, tcFlows);
  });
});

describe('TestLoadBalancerIngressRouteTypeProxy (LoadBalancerIPMode enabled)', () => {
  it.each([
    ['Proxy', '1.2.3.4', false],
    ['VIP', '1.2.3.5', true],
    [undefined, '1.2.3.6', true],
  ] as const)('ipMode %s', (ipMode, lbIP, expectedRule) => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = '10.20.30.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
        svc.status.loadBalancer = { ingress: [ipMode === undefined ? { ip: lbIP } : { ip: lbIP, ipMode }] };
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }]);
    fp.syncProxyRules();
    const ruleExists = chainRules(fp.iptablesData, 'nat', 'KUBE-SERVICES').includes(`-d ${lbIP} `);
    expect(ruleExists).toBe(expectedRule);
  });
});
