/**
 * The services of the IPVS iptables-skeleton e2e (ipvs-skeleton.e2e.spec.ts), built into desired
 * states by the backend's own buildDesiredIpvsState, and where each "VIP" really lives.
 *
 * This host has no IPVS, so nothing DNATs: every service address must be a real address. Each VIP
 * is bound on the loopback of the namespace that answers for it (a pod, or the node itself for the
 * VIP that stands for an address on kube-ipvs0), and the node routes it there. What the test then
 * sees is exactly what the set matches decide: whether the node masquerades (the pod's echo server
 * reports the source), drops (LB source ranges) or rejects (KUBE-IPVS-FILTER).
 */
import type { Endpoint, IPFamily, ServicePort } from '@kube-proxy/core';
import { joinHostPort, nullLogger, servicePortsFromService } from '@kube-proxy/core';
import { buildDesiredIpvsState, type DesiredIpvsState } from '@kube-proxy/backend-ipvs/internal';

type V1Service = Parameters<typeof servicePortsFromService>[0];

export const NODE_NAME = 'skeleton-node';
export const NODE_IP = '192.168.50.1';
/** The client's second address: the only client source the LB source ranges allow. */
export const ALLOWED_CLIENT_IP = '192.168.50.3';
export const POD_CLUSTER_CIDR = '10.244.0.0/16';
export const POD_CLUSTER_CIDR6 = 'fd00:10:244::/48';

/** web: ClusterIP, VIP on pod1 (port 81 on the same VIP is not a service port). */
export const WEB_VIP = '10.96.0.10';
/** lb: LoadBalancer with source ranges (the allowed client and the node), LB IP on pod2, node port 30081. */
export const LB_IP = '203.0.113.10';
export const LB_NODE_PORT = 30081;
/** lblocal: LoadBalancer with externalTrafficPolicy Local (endpoint on pod2, local), node port 30080. */
export const LB_LOCAL_IP = '203.0.113.11';
export const LB_LOCAL_NODE_PORT = 30080;
/** ext: ClusterIP with an external IP, on pod1. */
export const EXTERNAL_IP = '203.0.113.20';
/** nodevip: ClusterIP whose VIP is bound on the node itself, as IPVS binds every VIP on kube-ipvs0. */
export const NODE_VIP = '10.96.0.30';
/** web6: IPv6 ClusterIP on pod1. */
export const WEB_VIP6 = 'fd00:10:96::10';

/** Which namespace role holds which VIP (bound on its `lo`); the node routes the pod ones to the pod. */
export const VIP_HOMES: ReadonlyArray<{ readonly ip: string; readonly home: 'pod1' | 'pod2' | 'node' }> = [
  { ip: WEB_VIP, home: 'pod1' },
  { ip: EXTERNAL_IP, home: 'pod1' },
  { ip: LB_IP, home: 'pod2' },
  { ip: LB_LOCAL_IP, home: 'pod2' },
  { ip: NODE_VIP, home: 'node' },
  { ip: WEB_VIP6, home: 'pod1' },
];

function endpoint(ip: string, port: number, local: boolean): Endpoint {
  return {
    ip, port, key: joinHostPort(ip, port), ready: true, serving: true, terminating: false, isLocal: local,
    nodeName: local ? NODE_NAME : 'other-node', zone: '', zoneHints: null, nodeHints: null,
  };
}

function service(name: string, spec: Record<string, unknown>, status: Record<string, unknown> = {}): V1Service {
  return { metadata: { name, namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }], ...spec }, status } as V1Service;
}

const SERVICES: ReadonlyArray<{ svc: V1Service; family: IPFamily; endpoints: readonly Endpoint[] }> = [
  { svc: service('web', { clusterIP: WEB_VIP }), family: 'IPv4', endpoints: [endpoint('10.244.1.11', 80, false)] },
  {
    svc: service('lb', {
      type: 'LoadBalancer', clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: LB_NODE_PORT }],
      loadBalancerSourceRanges: [`${ALLOWED_CLIENT_IP}/32`, `${NODE_IP}/32`],
    }, { loadBalancer: { ingress: [{ ip: LB_IP }] } }),
    family: 'IPv4', endpoints: [endpoint('10.244.1.12', 80, false)],
  },
  {
    svc: service('lblocal', {
      type: 'LoadBalancer', clusterIP: '10.96.0.21', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: LB_LOCAL_NODE_PORT }],
      externalTrafficPolicy: 'Local', healthCheckNodePort: 32000,
    }, { loadBalancer: { ingress: [{ ip: LB_LOCAL_IP }] } }),
    family: 'IPv4', endpoints: [endpoint('10.244.1.12', 80, true)],
  },
  { svc: service('ext', { clusterIP: '10.96.0.22', externalIPs: [EXTERNAL_IP] }), family: 'IPv4', endpoints: [endpoint('10.244.1.11', 80, false)] },
  { svc: service('nodevip', { clusterIP: NODE_VIP }), family: 'IPv4', endpoints: [endpoint('10.244.1.13', 80, false)] },
  { svc: service('web6', { clusterIP: WEB_VIP6 }), family: 'IPv6', endpoints: [endpoint('fd00:10:244:1::11', 80, false)] },
];

/** The desired IPVS state of `family` for the scenario's services (node IP inside the LB's source ranges). */
export function scenarioState(family: IPFamily): DesiredIpvsState {
  const serviceMap = new Map<string, ServicePort>();
  const endpointsMap = new Map<string, Endpoint[]>();
  for (const s of SERVICES) {
    if (s.family !== family) continue;
    for (const p of servicePortsFromService(s.svc, family, nullLogger)) {
      serviceMap.set(p.name.key, p);
      endpointsMap.set(p.name.key, [...s.endpoints]);
    }
  }
  return buildDesiredIpvsState(serviceMap, endpointsMap, {
    family,
    nodeName: NODE_NAME,
    nodeLabels: {},
    nodeIP: family === 'IPv4' ? NODE_IP : 'fd00:192:168:50::1',
    nodePortAddresses: { all: true },
    localAddresses: [NODE_IP, 'fd00:192:168:50::1'],
  });
}
