import type { KernelObject } from '../../contracts/packet-trace.js';
import { explainTestConfig, explainTestNode, explainTestService, explainTestSlice } from '../../testing/explain-objects.js';
import { compareWithKernel } from './compare-with-kernel.js';
import { explainService } from './explain-service.js';
import { formatExplanation } from './format-explanation.js';

const svc = explainTestService(
  {
    type: 'LoadBalancer',
    externalTrafficPolicy: 'Local',
    healthCheckNodePort: 32000,
    loadBalancerSourceRanges: ['192.0.2.0/24'],
    ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }],
  },
  { ingress: [{ ip: '203.0.113.5' }, { ip: '203.0.113.6', ipMode: 'Proxy' }] },
);
const explanation = explainService({
  service: svc,
  endpointSlices: [explainTestSlice([{ ip: '10.0.1.5' }, { ip: '10.0.1.6', node: 'node-2' }, { ip: '10.0.1.7', ready: false }])],
  node: { name: 'node-1', object: explainTestNode('node-1', { addresses: ['10.0.0.1'] }) },
  config: explainTestConfig({ mode: 'iptables', clusterCIDR: '10.0.0.0/16', iptables: { localhostNodePorts: false } }),
  families: ['IPv4'],
});

describe('formatExplanation', () => {
  it('prints the Service port by port as an operator reads it', () => {
    expect(formatExplanation(explanation)).toBe(
      [
        'Service ns/web (LoadBalancer) on node node-1, iptables mode',
        'service ns/web is proxied on node-1 (IPv4) and every port reaches an endpoint',
        '',
        'Port ns/web:http TCP 80 (IPv4)',
        '  answers on:',
        '    internal cluster IP       10.96.0.10:80',
        '    external load-balancer IP 203.0.113.5:80 (ipMode VIP)',
        '    external load-balancer IP 203.0.113.6:80 (ipMode Proxy) — not programmed: ipMode Proxy: the load balancer sends traffic to the node addresses itself, so kube-proxy programs no rule for this IP',
        '    external NodePort         10.0.0.1:30080',
        '  NodePort 30080: nodePortAddresses selects no IPv4 range: the NodePort answers on every local IPv4 address of the node',
        '  internal traffic (internalTrafficPolicy Cluster): 2 endpoints',
        '    -> 10.0.1.5:8080',
        '    -> 10.0.1.6:8080',
        '    left out 10.0.1.7:8080 (node-1): not ready',
        '    masquerade (off-cluster-sources): traffic to a cluster IP from outside the cluster CIDR is masqueraded (10.0.0.0/16); a pod reaching itself through the Service (hairpin) is masqueraded',
        '  external traffic (externalTrafficPolicy Local): 1 endpoint',
        '    -> 10.0.1.5:8080',
        '    left out 10.0.1.6:8080 (node-2): on node node-2, and externalTrafficPolicy is Local',
        '    left out 10.0.1.7:8080 (node-1): not ready',
        "    the node's own traffic goes to the cluster endpoints: 10.0.1.5:8080, 10.0.1.6:8080",
        '    masquerade (node-sources): traffic the node itself sends to an external address is masqueraded; pods reaching an external address are sent to the cluster endpoints, without masquerade; external clients keep their source address (externalTrafficPolicy Local); a pod reaching itself through the Service (hairpin) is masqueraded',
        '  source ranges: only sources in 192.0.2.0/24 reach the load-balancer IPs of ns/web:http; any other source is dropped',
        '  health-check node port: 32000 (TCP, answers whether this node has a local endpoint)',
        '',
      ].join('\n'),
    );
  });

  it('adds the kernel objects and the differences when given', () => {
    const objects: KernelObject[] = [
      { kind: 'chain', name: 'nat/KUBE-SVC-ABC', rules: 3, endpoints: ['10.0.1.5:8080'], servicePort: 'ns/web:http' },
      { kind: 'chain', name: 'nat/KUBE-FW-ABC', rules: 1 },
    ];
    const differences = compareWithKernel(explanation, objects);
    const text = formatExplanation(explanation, objects, differences);
    expect(text.endsWith(
      [
        'Kernel objects:',
        '  chain nat/KUBE-SVC-ABC: 3 rules [ns/web:http] -> 10.0.1.5:8080',
        '  chain nat/KUBE-FW-ABC: 1 rule',
        '',
        'Differences from the kernel:',
        "  - endpoint 10.0.1.6:8080 is ready in the EndpointSlice but absent from the kernel's rules for ns/web:http (chain nat/KUBE-SVC-ABC)",
        '',
      ].join('\n'),
    )).toBe(true);
    expect(formatExplanation(explanation, [], [])).toContain('Kernel objects: none\n\nThe kernel holds what the objects say.\n');
  });

  it('says when a port receives no external traffic', () => {
    const clusterIPOnly = explainService({ service: explainTestService(), endpointSlices: [], node: { name: 'node-1' }, config: explainTestConfig({ mode: 'nftables' }), families: ['IPv4'] });
    expect(formatExplanation(clusterIPOnly)).toContain(
      [
        '  internal traffic (internalTrafficPolicy Cluster): 0 endpoints',
        '    no usable endpoint: REJECT, service ns/web has no ready endpoints for port ns/web:http',
        '    masquerade (never): nothing is reachable, so nothing is masqueraded',
        '  external traffic: none (the port has no external IP, load-balancer IP or NodePort: no external traffic arrives)',
      ].join('\n'),
    );
  });

  it('prints the reason and notes of a Service kube-proxy does not program', () => {
    const headless = explainService({ service: explainTestService({ clusterIP: 'None', clusterIPs: ['None'] }), endpointSlices: [], node: { name: 'node-1' }, config: explainTestConfig(), families: ['IPv4'] });
    expect(formatExplanation(headless)).toBe(
      "Service ns/web (ClusterIP) on node node-1, default mode\nheadless Service (clusterIP None): DNS returns its endpoints' addresses; kube-proxy programs nothing for it\n",
    );
  });
});
