import type { V1Node } from '@kubernetes/client-node';
import { validateNode } from './node.js';

/** A Node as the kubelet and the node IPAM controller leave it (abridged). */
const KUBELET_NODE = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: 'ip-10-0-1-23.eu-west-1.compute.internal',
    labels: {
      'kubernetes.io/hostname': 'ip-10-0-1-23.eu-west-1.compute.internal',
      'kubernetes.io/os': 'linux',
      'node.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/region': 'eu-west-1',
      'topology.kubernetes.io/zone': 'eu-west-1a',
    },
    annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
  },
  spec: {
    podCIDR: '10.244.3.0/24',
    podCIDRs: ['10.244.3.0/24', 'fd00:10:244:3::/64'],
    providerID: 'aws:///eu-west-1a/i-0123456789abcdef0',
    taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
  },
  status: {
    addresses: [
      { type: 'InternalIP', address: '10.0.1.23' },
      { type: 'InternalIP', address: 'fd00::1:23' },
      { type: 'ExternalIP', address: '203.0.113.23' },
      { type: 'Hostname', address: 'ip-10-0-1-23.eu-west-1.compute.internal' },
      { type: 'InternalDNS', address: 'ip-10-0-1-23.eu-west-1.compute.internal' },
    ],
  },
};

function node(body: Record<string, unknown>, metadata: Record<string, unknown> = {}): V1Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', ...metadata }, ...body } as V1Node;
}

describe('validateNode', () => {
  it.each<readonly [string, V1Node]>([
    ['a kubelet-written dual-stack Node', KUBELET_NODE as V1Node],
    ['a Node with nothing but a name', node({})],
    ['a Node without pod CIDRs yet', node({ spec: { podCIDR: '' } })],
    ['a namespace on a cluster-scoped object (the API server clears it)', node({}, { namespace: 'default' })],
    ['an address the proxy cannot use (the API server does not check address text)', node({ status: { addresses: [{ type: 'InternalIP', address: 'not-an-ip' }] } })],
  ])('accepts %s', (_, n) => {
    expect(validateNode(n)).toEqual([]);
  });

  it.each<readonly [string, V1Node, string]>([
    ['a hostile name', node({}, { name: 'node-1" -j ACCEPT\n#' }), 'metadata.name'],
    ['an upper-case name', node({}, { name: 'Node-1' }), 'metadata.name'],
    ['a 254-character name', node({}, { name: 'n'.repeat(254) }), 'metadata.name'],
    ['no name', node({}, { name: undefined }), 'metadata.name'],
    ['a hostile zone label', node({}, { labels: { 'topology.kubernetes.io/zone': 'zone a\n' } }), 'metadata.labels[topology.kubernetes.io/zone]'],
    ['an invalid podCIDR', node({ spec: { podCIDR: '10.244.1.0/33' } }), 'spec.podCIDR'],
    ['a podCIDR with an injected rule', node({ spec: { podCIDRs: ['10.244.1.0/24 -j ACCEPT'] } }), 'spec.podCIDRs[0]'],
    ['two IPv4 podCIDRs', node({ spec: { podCIDRs: ['10.244.1.0/24', '10.244.2.0/24'] } }), 'spec.podCIDRs'],
    ['three podCIDRs', node({ spec: { podCIDRs: ['10.244.1.0/24', 'fd00::/64', '10.244.2.0/24'] } }), 'spec.podCIDRs'],
    ['podCIDRs not a list', node({ spec: { podCIDRs: '10.244.1.0/24' } }), 'spec.podCIDRs'],
    ['addresses not a list', node({ status: { addresses: {} } }), 'status.addresses'],
    ['an address that is not a string', node({ status: { addresses: [{ type: 'InternalIP', address: 10 }] } }), 'status.addresses[0].address'],
    ['an address type that is not a string', node({ status: { addresses: [{ type: 1, address: '10.0.0.1' }] } }), 'status.addresses[0].type'],
  ])('refuses %s, naming %s', (_, n, field) => {
    expect(validateNode(n).map((e) => e.field)).toContain(field);
  });

  it.each([null, 7, 'node', [], { metadata: 'x' }, { metadata: { name: 'a' }, spec: 5, status: [] }])('never throws on %j', (g) => {
    expect(validateNode(g as unknown as V1Node).length).toBeGreaterThan(0);
  });
});
