/**
 * A simulated node carrying the rules of upstream's own tests (fixtures/upstream-trace: the expected
 * iptables-save and nft dumps of TestOverallIPTablesRules / TestOverallNFTablesRules), loaded with the
 * real tools — rules our code did not write. The node is shaped to those dumps: pods carry the
 * endpoint addresses 10.180.0.1–.5 (port 80), the node carries upstream's node IP 192.168.0.2, the
 * client reaches upstream's cluster, external and load-balancer IPs through the node and owns the
 * test's allowed (203.0.113.2) and blocked (203.0.113.130) load-balancer sources.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLIENT_IP, createSimulatedNode, iptablesCommand, type IptablesVariant, type SimulatedNode } from '@kube-proxy/testing-netns';
import type { NodeCase } from './trace-checks.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/upstream-trace/', import.meta.url));
const fixture = (file: string): string => readFileSync(`${FIXTURES}${file}`, 'utf8');

export const UPSTREAM_POD_COUNT = 5;
export const UPSTREAM_ENDPOINT_PORT = 80;
export const UPSTREAM_NODE_IP = '192.168.0.2';
const ALLOWED_LB_SOURCE = '203.0.113.2';
const BLOCKED_LB_SOURCE = '203.0.113.130';
/** Upstream's conventions (proxier_test.go): service, external and load-balancer IPs the client routes via the node. */
const CLIENT_ROUTES = ['172.30.0.0/16', '192.168.99.0/24', '1.2.3.4/32', '5.6.7.8/32', `${UPSTREAM_NODE_IP}/32`];
/** The nfacct objects the iptables dump's `-m nfacct` matches name. */
const NFACCT_OBJECTS = ['localhost_nps_accepted_pkts', 'ct_state_invalid_dropped_pkts'];

/** Endpoint address of pod N in upstream's dumps. */
export const upstreamEndpointIP = (n: number): string => `10.180.0.${n}`;

/** The node, its pods re-addressed to upstream's endpoints. The rules are loaded separately. */
export async function createUpstreamShapedNode(prefix: string, env: Readonly<Record<string, string | undefined>>): Promise<SimulatedNode> {
  const node = await createSimulatedNode({
    prefix,
    podCount: UPSTREAM_POD_COUNT,
    clientExtraAddresses: [`${ALLOWED_LB_SOURCE}/32`, `${BLOCKED_LB_SOURCE}/32`],
    clientRoutes: CLIENT_ROUTES,
    env,
  });
  try {
    await node.exec(node.ns.node, 'ip', ['addr', 'add', `${UPSTREAM_NODE_IP}/32`, 'dev', node.uplink]);
    for (const [i, pod] of node.pods.entries()) {
      const ip = upstreamEndpointIP(i + 1);
      await node.exec(pod.ns, 'ip', ['addr', 'add', `${ip}/32`, 'dev', 'eth0']);
      // On-link over the pod bridge: the pod answers ARP for its extra address on eth0.
      await node.exec(node.ns.node, 'ip', ['route', 'add', `${ip}/32`, 'dev', node.bridge]);
    }
    return node;
  } catch (e) {
    await node.destroy();
    throw e;
  }
}

/** iptables-restore of upstream's dump and then of its jumps from the built-in chains, in the node's namespace. */
export async function loadUpstreamIptables(node: SimulatedNode, variant: IptablesVariant): Promise<void> {
  for (const name of NFACCT_OBJECTS) await node.exec(node.ns.node, 'nfacct', ['add', name]);
  for (const file of ['iptables-overall.rules', 'iptables-jumps.rules']) {
    const r = await node.exec(node.ns.node, iptablesCommand(variant, 'iptables-restore'), ['-w', '5', '--noflush'], { input: fixture(file), allowFailure: true });
    if (r.code !== 0) throw new Error(`${iptablesCommand(variant, 'iptables-restore')} of ${file} failed: ${r.stderr}`);
  }
}

/**
 * `nft -f` of upstream's dump. The fake's dump puts each chain's rules beside the chain, so a rule
 * can jump to a chain declared further down; the declarations go first (same objects, same rules).
 */
export async function loadUpstreamNftables(node: SimulatedNode): Promise<void> {
  const lines = fixture('nftables-overall.nft').split('\n');
  const declaration = (l: string): boolean => /^add (table|chain|set|map) /.test(l);
  const text = [...lines.filter(declaration), ...lines.filter((l) => !declaration(l))].join('\n');
  const r = await node.exec(node.ns.node, 'nft', ['-f', '-'], { input: text, allowFailure: true });
  if (r.code !== 0) throw new Error(`nft -f of nftables-overall.nft failed: ${r.stderr}`);
}

const ep = (...pods: number[]): string[] => pods.map((n) => `${upstreamEndpointIP(n)}:${UPSTREAM_ENDPOINT_PORT}`);
/** pod3's own address (in upstream's pod CIDR 10.0.0.0/8, so its traffic is not masqueraded). */
const POD3 = '10.244.1.13';

/** The flows of upstream's overall tests, checked against real traffic; `unallocated` differs by mode. */
export function upstreamCases(mode: 'iptables' | 'nftables'): NodeCase[] {
  return [
    { name: 'ns4/svc4 cluster IP, two endpoints, from outside the pod CIDR', origin: 'client', from: CLIENT_IP, host: '172.30.0.44', port: 80, want: { verdict: 'DNAT', endpoints: ep(4, 5), masquerade: true, service: 'ns4/svc4:p80' } },
    { name: 'ns1/svc1 cluster IP from a pod (source kept)', origin: 'pod3', from: POD3, host: '172.30.0.41', port: 80, want: { verdict: 'DNAT', endpoints: ep(1), masquerade: false, service: 'ns1/svc1:p80' } },
    { name: 'ns3/svc3 NodePort on the node IP', origin: 'client', from: CLIENT_IP, host: UPSTREAM_NODE_IP, port: 3003, want: { verdict: 'DNAT', endpoints: ep(3), masquerade: true, service: 'ns3/svc3:p80' } },
    { name: 'ns4/svc4 external IP', origin: 'client', from: CLIENT_IP, host: '192.168.99.33', port: 80, want: { verdict: 'DNAT', endpoints: ep(4, 5), masquerade: true, service: 'ns4/svc4:p80' } },
    { name: 'ns6/svc6 without endpoints: REJECT', origin: 'pod3', from: POD3, host: '172.30.0.46', port: 80, want: { verdict: 'REJECT', endpoints: [] } },
    { name: 'ns2/svc2 load balancer, externalTrafficPolicy Local without a local endpoint: DROP', origin: 'client', from: CLIENT_IP, host: '1.2.3.4', port: 80, want: { verdict: 'DROP', endpoints: [] } },
    // Upstream short-circuits the node's own traffic to an eTP Local load balancer into the Service (masqueraded).
    { name: 'ns2/svc2 load balancer from the node itself (OUTPUT path): short-circuited, masqueraded', origin: 'node', from: UPSTREAM_NODE_IP, host: '1.2.3.4', port: 80, want: { verdict: 'DNAT', endpoints: ep(2), masquerade: true, service: 'ns2/svc2:p80' } },
    { name: 'ns5/svc5 load balancer from a source outside loadBalancerSourceRanges: DROP', origin: 'client', from: BLOCKED_LB_SOURCE, host: '5.6.7.8', port: 80, want: { verdict: 'DROP', endpoints: [] } },
    { name: 'ns5/svc5 load balancer from an allowed source, ClientIP affinity', origin: 'client', from: ALLOWED_LB_SOURCE, host: '5.6.7.8', port: 80, affinity: true, want: { verdict: 'DNAT', endpoints: ep(3), masquerade: true, service: 'ns5/svc5:p80' } },
    // nftables mode drops traffic to unallocated addresses of the service CIDR; iptables mode has no rule for it.
    { name: 'an unallocated cluster IP', origin: 'client', from: CLIENT_IP, host: '172.30.0.99', port: 80, want: { verdict: mode === 'nftables' ? 'DROP' : 'ACCEPT', endpoints: [], service: null } },
  ];
}
