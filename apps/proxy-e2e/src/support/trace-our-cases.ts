/**
 * The packets trace-live.e2e.spec.ts traces over the rules our own proxy programs for the datapath
 * scenario (support/scenario.ts): one per Service shape the issue names — a ClusterIP with several
 * endpoints (from outside the cluster CIDR: masqueraded; from a pod: not; from the node itself), a
 * NodePort, no endpoints (REJECT), externalTrafficPolicy Local with and without a local endpoint, a
 * load balancer whose source ranges block the client (DROP) or let it in, ClientIP affinity, UDP.
 */
import { CLIENT_IP, NODE_IP } from '@kube-proxy/testing-netns';
import { POD_TCP_PORT, POD_UDP_PORT, SVC } from './scenario.js';
import type { NodeCase } from './trace-checks.js';

/** The scenario's pods: podN is 10.244.1.(10+N) (libs/testing/netns topology). */
export const podIP = (n: number): string => `10.244.1.${10 + n}`;
const tcp = (...pods: number[]): string[] => pods.map((n) => `${podIP(n)}:${POD_TCP_PORT}`);

/** The second client address, outside the load balancer's allowed range (the node is created with it). */
export const DENIED_CLIENT = SVC.lb.deniedSource;
/** The pod the in-cluster connections come from (it is not an endpoint of the Services it calls). */
const POD3 = podIP(3);

export const OUR_CASES: readonly NodeCase[] = [
  {
    name: 'ClusterIP with three endpoints, from outside the cluster CIDR (masqueraded)',
    origin: 'client',
    from: CLIENT_IP,
    host: SVC.spread.ip,
    port: SVC.spread.port,
    want: { verdict: 'DNAT', endpoints: tcp(1, 2, 3), masquerade: true, service: 'default/spread:http' },
  },
  {
    name: 'ClusterIP from a pod (source kept)',
    origin: 'pod3',
    from: POD3,
    host: SVC.web.ip,
    port: SVC.web.port,
    want: { verdict: 'DNAT', endpoints: tcp(1, 2), masquerade: false, service: 'default/web:http' },
  },
  {
    name: 'ClusterIP from the node itself (OUTPUT path, masqueraded)',
    origin: 'node',
    from: NODE_IP,
    host: SVC.spread.ip,
    port: SVC.spread.port,
    want: { verdict: 'DNAT', endpoints: tcp(1, 2, 3), masquerade: true, service: 'default/spread:http' },
  },
  {
    name: 'NodePort on the node IP from the client',
    origin: 'client',
    from: CLIENT_IP,
    host: NODE_IP,
    port: SVC.web.nodePort,
    want: { verdict: 'DNAT', endpoints: tcp(1, 2), masquerade: true, service: 'default/web:http' },
  },
  {
    name: 'no endpoints: REJECT',
    origin: 'pod3',
    from: POD3,
    host: SVC.noep.ip,
    port: SVC.noep.port,
    want: { verdict: 'REJECT', endpoints: [], service: 'default/noep:http' },
  },
  {
    name: 'externalTrafficPolicy Local with a local endpoint: only it, source kept',
    origin: 'client',
    from: CLIENT_IP,
    host: NODE_IP,
    port: SVC.local.nodePort,
    want: { verdict: 'DNAT', endpoints: tcp(1), masquerade: false, service: 'default/local:http' },
  },
  {
    name: 'externalTrafficPolicy Local without a local endpoint: DROP',
    origin: 'client',
    from: CLIENT_IP,
    host: NODE_IP,
    port: SVC.localNone.nodePort,
    want: { verdict: 'DROP', endpoints: [], service: 'default/local-none:http' },
  },
  {
    name: 'loadBalancerSourceRanges: a source outside the ranges is dropped',
    origin: 'client',
    from: DENIED_CLIENT,
    host: SVC.lb.ingress,
    port: SVC.lb.port,
    want: { verdict: 'DROP', endpoints: [] },
  },
  {
    name: 'loadBalancerSourceRanges: the allowed source reaches the endpoints',
    origin: 'client',
    from: CLIENT_IP,
    host: SVC.lb.ingress,
    port: SVC.lb.port,
    want: { verdict: 'DNAT', endpoints: tcp(1, 2), masquerade: true, service: 'default/lb:http' },
  },
  {
    name: 'ClientIP affinity: every endpoint listed, one reached',
    origin: 'client',
    from: CLIENT_IP,
    host: SVC.webAff.ip,
    port: SVC.webAff.port,
    affinity: true,
    want: { verdict: 'DNAT', endpoints: tcp(1, 2, 3), masquerade: true, service: 'default/web-aff:http' },
  },
  {
    name: 'UDP ClusterIP from a pod',
    origin: 'pod3',
    from: POD3,
    host: SVC.dns.ip,
    port: SVC.dns.port,
    protocol: 'UDP',
    want: { verdict: 'DNAT', endpoints: [`${podIP(1)}:${POD_UDP_PORT}`, `${podIP(2)}:${POD_UDP_PORT}`], masquerade: false, service: 'default/dns:dns' },
  },
];
