// Packet-flow tests ported from upstream's pkg/proxy/nftables/proxier_test.go: the same services and
// slices, the same packets, the same expected destinations and masquerade decisions.
import type { IPFamily, V1EndpointSlice } from '@kube-proxy/core';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, TEST_EXTERNAL_CLIENT, TEST_EXTERNAL_CLIENT_BLOCKED, TEST_NODE_IP, TEST_NODE_IP_ALT, TEST_NODE_IPS, TEST_NODE_IPV6, TEST_NODE_IPV6_ALT, TEST_NODE_NAME } from '../testing/fake-proxier.js';
import { runPacketFlows, type PacketFlowCase } from '../testing/packet-flow.js';
import type { MemoryNft } from '../kernel/memory-nft.js';

function expectFlows(nft: MemoryNft, cases: readonly PacketFlowCase[]): void {
  const { got, want } = runPacketFlows(nft.table, TEST_NODE_IPS, cases);
  expect(got).toEqual(want);
}

type Ep = { ip: string; node?: string };
function slice(ns: string, name: string, family: IPFamily, endpoints: Ep[], ports: Array<{ name: string; port: number; protocol?: string }>): V1EndpointSlice {
  return makeTestEndpointSlice(ns, name, 1, (eps) => {
    eps.addressType = family;
    eps.endpoints = endpoints.map((e) => ({ addresses: [e.ip], ...(e.node ? { nodeName: e.node } : {}) }));
    eps.ports = ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP' }));
  });
}

describe('nftables packet flows', () => {
  // Ports upstream's TestNoEndpointsReject.
  it('rejects connections to every address of a service with no endpoints', async () => {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(
      makeTestService('ns1', 'svc1', (s) => {
        Object.assign(s.spec, { type: 'LoadBalancer', clusterIP: '172.30.0.41', externalIPs: ['192.168.99.11'], ports: [{ name: 'p80', protocol: 'TCP', port: 80, nodePort: 3001 }] });
        s.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
      }),
    );
    await proxier.syncProxyRules();
    expectFlows(nft, [
      { name: 'pod to cluster IP with no endpoints', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: 'REJECT' },
      { name: 'external to external IP with no endpoints', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.11', destPort: 80, output: 'REJECT' },
      { name: 'pod to NodePort with no endpoints', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: 'REJECT' },
      { name: 'external to NodePort with no endpoints', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: 'REJECT' },
      { name: 'pod to LoadBalancer IP with no endpoints', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: 'REJECT' },
      { name: 'external to LoadBalancer IP with no endpoints', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'REJECT' },
    ]);
  });

  // Ports upstream's TestClusterIPGeneral.
  it('balances cluster IPs over every endpoint, by protocol and target port, and rejects or drops the rest', async () => {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(makeTestService('ns1', 'svc1', (s) => Object.assign(s.spec, { clusterIP: '172.30.0.41', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] })));
    proxier.onServiceAdd(
      makeTestService('ns2', 'svc2', (s) =>
        Object.assign(s.spec, {
          clusterIP: '172.30.0.42',
          ports: [
            { name: 'http', port: 80, protocol: 'TCP' },
            { name: 'https', port: 443, protocol: 'TCP', targetPort: 8443 },
            { name: 'dns-udp', port: 53, protocol: 'UDP' },
            { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 5353 },
            { name: 'dns-sctp', port: 53, protocol: 'SCTP' },
          ],
        }),
      ),
    );
    proxier.onEndpointSliceAdd(slice('ns1', 'svc1', 'IPv4', [{ ip: '10.180.0.1', node: TEST_NODE_NAME }], [{ name: 'http', port: 80 }]));
    proxier.onEndpointSliceAdd(
      slice('ns2', 'svc2', 'IPv4', [{ ip: '10.180.0.1', node: TEST_NODE_NAME }, { ip: '10.180.2.1', node: 'node2' }], [
        { name: 'http', port: 80 },
        { name: 'https', port: 8443 },
        { name: 'dns-udp', port: 53, protocol: 'UDP' },
        { name: 'dns-tcp', port: 5353 },
        { name: 'dns-sctp', port: 53, protocol: 'SCTP' },
      ]),
    );
    await proxier.syncProxyRules();
    expectFlows(nft, [
      { name: 'simple clusterIP', sourceIP: '10.180.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80' },
      { name: 'hairpin to cluster IP', sourceIP: '10.180.0.1', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: true },
      { name: 'clusterIP with multiple endpoints', sourceIP: '10.180.0.2', destIP: '172.30.0.42', destPort: 80, output: '10.180.0.1:80, 10.180.2.1:80' },
      { name: 'clusterIP with TargetPort', sourceIP: '10.180.0.2', destIP: '172.30.0.42', destPort: 443, output: '10.180.0.1:8443, 10.180.2.1:8443' },
      { name: 'same port, TCP', sourceIP: '10.180.0.2', protocol: 'tcp', destIP: '172.30.0.42', destPort: 53, output: '10.180.0.1:5353, 10.180.2.1:5353' },
      { name: 'same port, UDP', sourceIP: '10.180.0.2', protocol: 'udp', destIP: '172.30.0.42', destPort: 53, output: '10.180.0.1:53, 10.180.2.1:53' },
      { name: 'same port, SCTP', sourceIP: '10.180.0.2', protocol: 'sctp', destIP: '172.30.0.42', destPort: 53, output: '10.180.0.1:53, 10.180.2.1:53' },
      { name: 'TCP-only port does not match UDP traffic', sourceIP: '10.180.0.2', protocol: 'udp', destIP: '172.30.0.42', destPort: 80, output: 'REJECT' },
      { name: "svc1 does not accept svc2's ports", sourceIP: '10.180.0.2', destIP: '172.30.0.41', destPort: 443, output: 'REJECT' },
      { name: 'packet to unallocated cluster ip', sourceIP: '10.180.0.2', destIP: '172.30.0.50', destPort: 80, output: 'DROP' },
    ]);
  });

  // Ports upstream's TestLoadBalancer (source ranges include the node's own network, 192.168.0.0/24).
  it('guards load-balancer IPs by source range, letting the node and its SNATted VIP through, but not node ports', async () => {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(
      makeTestService('ns1', 'svc1', (s) => {
        Object.assign(s.spec, { type: 'LoadBalancer', clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }], loadBalancerSourceRanges: ['192.168.0.0/24', ' 203.0.113.0/25'] });
        s.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }, { ip: '5.6.7.8' }] };
      }),
    );
    proxier.onEndpointSliceAdd(slice('ns1', 'svc1', 'IPv4', [{ ip: '10.180.0.1' }], [{ name: 'p80', port: 80 }]));
    await proxier.syncProxyRules();
    const ep = '10.180.0.1:80';
    expectFlows(nft, [
      { name: 'pod to cluster IP', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: ep },
      { name: 'external to nodePort', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: ep, masq: true },
      { name: 'nodePort bypasses LoadBalancerSourceRanges', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: TEST_NODE_IP, destPort: 3001, output: ep, masq: true },
      { name: 'accepted external to LB1', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: ep, masq: true },
      { name: 'accepted external to LB2', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '5.6.7.8', destPort: 80, output: ep, masq: true },
      { name: 'blocked external to LB1', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: '1.2.3.4', destPort: 80, output: 'DROP' },
      { name: 'blocked external to LB2', sourceIP: TEST_EXTERNAL_CLIENT_BLOCKED, destIP: '5.6.7.8', destPort: 80, output: 'DROP' },
      { name: 'pod to LB1 (blocked by LoadBalancerSourceRanges)', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: 'DROP' },
      { name: 'pod to LB2 (blocked by LoadBalancerSourceRanges)', sourceIP: '10.0.0.2', destIP: '5.6.7.8', destPort: 80, output: 'DROP' },
      { name: 'node to LB1 (allowed by LoadBalancerSourceRanges)', sourceIP: TEST_NODE_IP, destIP: '1.2.3.4', destPort: 80, output: ep, masq: true },
      { name: 'node to LB2 (allowed by LoadBalancerSourceRanges)', sourceIP: TEST_NODE_IP, destIP: '5.6.7.8', destPort: 80, output: ep, masq: true },
      { name: 'same node to LB1, SNATted to LB1 (implicitly allowed)', sourceIP: '1.2.3.4', destIP: '1.2.3.4', destPort: 80, output: ep, masq: true },
      { name: 'same node to LB2, SNATted to LB2 (implicitly allowed)', sourceIP: '5.6.7.8', destIP: '5.6.7.8', destPort: 80, output: ep, masq: true },
    ]);
  });

  // Ports upstream's TestNodePorts (its four cases: IPv4 and IPv6, default and several --nodeport-addresses).
  describe.each([
    { name: 'ipv4', family: 'IPv4' as const, nodePortAddresses: undefined, allowAltNodeIP: false },
    { name: 'ipv4, multiple nodeport-addresses', family: 'IPv4' as const, nodePortAddresses: ['192.168.0.0/24', '192.168.1.0/24', '2001:db8::/64'], allowAltNodeIP: true },
    { name: 'ipv6', family: 'IPv6' as const, nodePortAddresses: undefined, allowAltNodeIP: false },
    { name: 'ipv6, multiple nodeport-addresses', family: 'IPv6' as const, nodePortAddresses: ['192.168.0.0/24', '192.168.1.0/24', '2001:db8::/64', '2001:db8:1::2/128'], allowAltNodeIP: true },
  ])('node ports: $name', ({ family, nodePortAddresses, allowAltNodeIP }) => {
    it(allowAltNodeIP ? 'accepts node ports on every selected address' : 'accepts node ports on the primary node IP only', async () => {
      const v4 = family === 'IPv4';
      const { proxier, nft } = newFakeProxier(family, { nodePortAddresses });
      const svcIP = v4 ? '172.30.0.41' : 'fd00:172:30::41';
      const [ep1, ep2] = v4 ? ['10.180.0.1', '10.180.2.1'] : ['fd00:10:180::1', 'fd00:10:180::2:1'];
      const nodeIP = v4 ? TEST_NODE_IP : TEST_NODE_IPV6;
      proxier.onServiceAdd(makeTestService('ns1', 'svc1', (s) => Object.assign(s.spec, { type: 'NodePort', clusterIP: svcIP, ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }] })));
      proxier.onEndpointSliceAdd(slice('ns1', 'svc1', family, [{ ip: ep1 }, { ip: ep2, node: TEST_NODE_NAME }], [{ name: 'p80', port: 80 }]));
      await proxier.syncProxyRules();
      const podIP = v4 ? '10.0.0.2' : 'fd00:10::2';
      const client = v4 ? TEST_EXTERNAL_CLIENT : '2600:5200::1';
      const altNodeIP = v4 ? TEST_NODE_IP_ALT : TEST_NODE_IPV6_ALT;
      const hp = (ip: string) => (v4 ? `${ip}:80` : `[${ip}]:80`);
      const output = `${hp(ep1)}, ${hp(ep2)}`;
      expectFlows(nft, [
        { name: 'pod to cluster IP', sourceIP: podIP, destIP: svcIP, destPort: 80, output },
        { name: 'external to nodePort', sourceIP: client, destIP: nodeIP, destPort: 3001, output, masq: true },
        { name: 'node to nodePort', sourceIP: nodeIP, destIP: nodeIP, destPort: 3001, output, masq: true },
        allowAltNodeIP
          ? { name: 'external to nodePort on secondary IP', sourceIP: client, destIP: altNodeIP, destPort: 3001, output, masq: true }
          : { name: 'secondary nodeIP ignores NodePorts', sourceIP: client, destIP: altNodeIP, destPort: 3001, output: '' },
      ]);
    });
  });

  // Not an upstream case: --nodeport-addresses 0.0.0.0/0 selects every local address, which the
  // skeleton writes as `fib daddr type local` (never localhost) rather than the nodeport-ips set.
  it('accepts node ports on every local address but localhost when nodePortAddresses covers them all', async () => {
    const { proxier, nft } = newFakeProxier('IPv4', { nodePortAddresses: ['0.0.0.0/0'] });
    proxier.onServiceAdd(makeTestService('ns1', 'svc1', (s) => Object.assign(s.spec, { type: 'NodePort', clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }] })));
    await proxier.syncProxyRules();
    expect(nft.table.rulesOf('services')).toContain('fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports');
    expectFlows(nft, [
      { name: 'external to nodePort on secondary IP, no endpoints', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP_ALT, destPort: 3001, output: 'REJECT' },
      { name: 'external to a non-local address', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.5.5', destPort: 3001, output: '' },
    ]);
    proxier.onEndpointSliceAdd(slice('ns1', 'svc1', 'IPv4', [{ ip: '10.180.0.1' }], [{ name: 'p80', port: 80 }]));
    await proxier.syncProxyRules();
    expectFlows(nft, [{ name: 'external to nodePort on secondary IP', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP_ALT, destPort: 3001, output: '10.180.0.1:80', masq: true }]);
  });

  const lbService = (policy: 'Local' | 'Cluster') =>
    makeTestService('ns1', 'svc1', (s) => {
      Object.assign(s.spec, {
        type: 'LoadBalancer',
        externalTrafficPolicy: policy,
        clusterIP: '172.30.0.41',
        externalIPs: ['192.168.99.11'],
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001, targetPort: 80 }],
        ...(policy === 'Local' ? { healthCheckNodePort: 30000 } : {}),
      });
      s.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
    });
  const twoEndpoints = () => slice('ns1', 'svc1', 'IPv4', [{ ip: '10.180.0.1' }, { ip: '10.180.2.1', node: TEST_NODE_NAME }], [{ name: 'p80', port: 80 }]);
  const both = '10.180.0.1:80, 10.180.2.1:80';

  // Ports upstream's TestExternalTrafficPolicyLocal.
  it('sends external traffic of a Local service to local endpoints only, unmasqueraded, and pod traffic everywhere', async () => {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(lbService('Local'));
    proxier.onEndpointSliceAdd(twoEndpoints());
    await proxier.syncProxyRules();
    expectFlows(nft, [
      { name: 'pod to cluster IP hits both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: both },
      { name: 'pod to external IP hits both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: '192.168.99.11', destPort: 80, output: both },
      { name: 'external to external IP hits only local endpoint, unmasqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.11', destPort: 80, output: '10.180.2.1:80' },
      { name: 'pod to LB IP hits only both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: both },
      { name: 'external to LB IP hits only local endpoint, unmasqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.180.2.1:80' },
      { name: 'pod to NodePort hits both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: both },
      { name: 'external to NodePort hits only local endpoint, unmasqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.2.1:80' },
    ]);
  });

  // Ports upstream's TestExternalTrafficPolicyCluster.
  it('masquerades external traffic of a Cluster service and balances it over every endpoint', async () => {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(lbService('Cluster'));
    proxier.onEndpointSliceAdd(twoEndpoints());
    await proxier.syncProxyRules();
    expectFlows(nft, [
      { name: 'pod to cluster IP hits both endpoints, unmasqueraded', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: both },
      { name: 'pod to external IP hits both endpoints, masqueraded', sourceIP: '10.0.0.2', destIP: '192.168.99.11', destPort: 80, output: both, masq: true },
      { name: 'external to external IP hits both endpoints, masqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '192.168.99.11', destPort: 80, output: both, masq: true },
      { name: 'pod to LB IP hits both endpoints, masqueraded', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: both, masq: true },
      { name: 'external to LB IP hits both endpoints, masqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: both, masq: true },
      { name: 'pod to NodePort hits both endpoints, masqueraded', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: both, masq: true },
      { name: 'external to NodePort hits both endpoints, masqueraded', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: both, masq: true },
    ]);
  });
});
