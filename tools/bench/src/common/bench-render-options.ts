import type { RenderOptions } from '@kube-proxy/backend-iptables/internal';

/**
 * The iptables render options of the IPv4 node the benchmarks' synthetic cluster (scale-cluster.ts)
 * is rendered for: node-0 at 192.168.0.10, pods in 10.128.0.0/9, NodePorts on every address.
 */
export const BENCH_RENDER_OPTIONS: RenderOptions = {
  family: 'IPv4',
  nodeName: 'node-0',
  nodeIP: '192.168.0.10',
  masqueradeBit: 14,
  masqueradeAll: false,
  localhostNodePorts: true,
  randomFully: true,
  localDetector: { kind: 'cidr', cidr: '10.128.0.0/9' },
  nodePortAddresses: { all: true },
  nodeLabels: {},
};
