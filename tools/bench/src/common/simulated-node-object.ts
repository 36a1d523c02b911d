import { NODE_IP } from '@kube-proxy/testing-netns';

/** The Node object the benches' simulated node is known by to the proxy (its name is the --hostname-override they pass). */
export const BENCH_NODE_NAME = 'node-0';

/** The API's Node for the simulated node: its InternalIP is the netns node's address, its pod CIDR the one the benches use. */
export function simulatedNodeObject(): object {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: BENCH_NODE_NAME, labels: { 'kubernetes.io/hostname': BENCH_NODE_NAME } },
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
    status: { addresses: [{ type: 'InternalIP', address: NODE_IP }, { type: 'Hostname', address: BENCH_NODE_NAME }] },
  };
}
