/**
 * The Services of max-length-names.e2e.spec.ts (issue 20): names as long as the API server allows
 * (namespace and Service name 63 characters, port name 15, so `namespace/name:port` is 143 bytes,
 * over nft's 128-byte comment limit), IPv4 and IPv6, with and without endpoints, beside a healthy
 * short-named Service per family. Written as manifests for `--manifests`, and as core ServicePorts
 * for the IPVS batches (which have no proxy run on this kernel).
 */
import { mkdirSync } from 'node:fs';
import type { Endpoint, IPFamily, ServicePort } from '@kube-proxy/core';
import { joinHostPort, nullLogger, servicePortsFromService } from '@kube-proxy/core';
import type { SimulatedNode } from '@kube-proxy/testing-netns';
import { endpointSlice, service, writeManifest, type EndpointSpec } from './manifests.js';

/** A valid DNS label of exactly 63 characters starting with `tag`. */
export const label63 = (tag: string): string => tag + 'x'.repeat(63 - tag.length);

export const LONG_NS = label63('ns-max-length-');
export const LONG_PORT = 'port-name-15chr';
export const NODE_NAME = 'node-1';
export const POD_TCP_PORT = 8080;

export interface LongService {
  readonly name: string;
  readonly family: IPFamily;
  readonly clusterIP: string;
  /** 1-based pods serving it (none: the no-endpoints case). */
  readonly pods: readonly number[];
  /** The service port key as it appears in comments: `namespace/name:port`. */
  readonly key: string;
}

function long(name: string, family: IPFamily, clusterIP: string, pods: readonly number[]): LongService {
  return { name, family, clusterIP, pods, key: `${LONG_NS}/${name}:${LONG_PORT}` };
}

export const LONG: readonly LongService[] = [
  long(label63('with-endpoints-v4-'), 'IPv4', '10.96.0.11', [2]),
  long(label63('no-endpoints-v4-'), 'IPv4', '10.96.0.12', []),
  long(label63('with-endpoints-v6-'), 'IPv6', 'fd00:10:96::11', [2]),
  long(label63('no-endpoints-v6-'), 'IPv6', 'fd00:10:96::12', []),
];

/** The healthy short-named Services: `default/web` per family, on pod1. */
export const HEALTHY = { IPv4: '10.96.0.10', IPv6: 'fd00:10:96::10' } as const;

/** The LB ingress and node ports of the long Services with endpoints (LoadBalancer + ClientIP affinity). */
const LB_INGRESS = { IPv4: '203.0.113.11', IPv6: 'fd00:10:96::ff11' } as const;
const SOURCE_RANGE = { IPv4: '192.168.50.0/24', IPv6: 'fd00:192:168:50::/64' } as const;

function podEndpoints(node: SimulatedNode, pods: readonly number[], family: IPFamily): EndpointSpec[] {
  return pods.map((i) => {
    const p = node.pods[i - 1];
    const ip = family === 'IPv6' ? p?.ip6 : p?.ip;
    if (!p || !ip) throw new Error(`no pod${i} address of ${family} (create the node with ipv6: true)`);
    return { ip, podName: p.name, nodeName: NODE_NAME };
  });
}

/** manifests.ts writes IPv4 objects; this turns one into the given family's. */
function ofFamily(obj: Record<string, unknown>, family: IPFamily): Record<string, unknown> {
  if (family === 'IPv4') return obj;
  if (obj['kind'] === 'EndpointSlice') return { ...obj, addressType: 'IPv6' };
  return { ...obj, spec: { ...(obj['spec'] as object), ipFamilies: ['IPv6'] } };
}

/** The node (both families), the healthy Services and the long ones, as manifests in `dir`. */
export function writeMaxLengthManifests(dir: string, node: SimulatedNode): void {
  if (!node.nodeIp6) throw new Error('the max-length scenario needs a dual-stack node (ipv6: true)');
  mkdirSync(dir, { recursive: true });
  writeManifest(dir, 'node.yaml', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE_NAME, labels: { 'kubernetes.io/hostname': NODE_NAME } },
    spec: { podCIDR: node.podCidr, podCIDRs: [node.podCidr, 'fd00:10:244:1::/64'] },
    status: { addresses: [{ type: 'InternalIP', address: node.nodeIp }, { type: 'InternalIP', address: node.nodeIp6 }, { type: 'Hostname', address: NODE_NAME }] },
  });
  const http = [{ name: 'http', port: POD_TCP_PORT }];
  for (const family of ['IPv4', 'IPv6'] as const) {
    const name = family === 'IPv4' ? 'web' : 'web6';
    writeManifest(dir, `svc-${name}.yaml`, ofFamily(service({ name, clusterIP: HEALTHY[family], ports: [{ name: 'http', port: 80, targetPort: POD_TCP_PORT }] }), family));
    writeManifest(dir, `eps-${name}.yaml`, ofFamily(endpointSlice({ service: name, ports: http, endpoints: podEndpoints(node, [1], family) }), family));
  }
  LONG.forEach((s, i) => {
    const withEndpoints = s.pods.length > 0;
    const ports = [{ name: LONG_PORT, port: 80, targetPort: POD_TCP_PORT, nodePort: 30011 + i }];
    const svc = withEndpoints
      ? service({ name: s.name, namespace: LONG_NS, type: 'LoadBalancer', clusterIP: s.clusterIP, ports, sessionAffinity: 'ClientIP', loadBalancerIngressIPs: [LB_INGRESS[s.family]], loadBalancerSourceRanges: [SOURCE_RANGE[s.family]] })
      : service({ name: s.name, namespace: LONG_NS, type: 'NodePort', clusterIP: s.clusterIP, ports });
    writeManifest(dir, `svc-long-${i}.yaml`, ofFamily(svc, s.family));
    if (withEndpoints) {
      const slice = endpointSlice({ service: s.name, namespace: LONG_NS, ports: [{ name: LONG_PORT, port: POD_TCP_PORT }], endpoints: podEndpoints(node, s.pods, s.family) });
      writeManifest(dir, `eps-long-${i}.yaml`, ofFamily(slice, s.family));
    }
  });
}

/** The long Services of `family` as core ServicePorts and endpoints (for the IPVS batches). */
export function longServicePorts(family: IPFamily): { serviceMap: Map<string, ServicePort>; endpointsMap: Map<string, Endpoint[]> } {
  const serviceMap = new Map<string, ServicePort>();
  const endpointsMap = new Map<string, Endpoint[]>();
  LONG.filter((s) => s.family === family).forEach((s, i) => {
    const [p] = servicePortsFromService(
      {
        metadata: { name: s.name, namespace: LONG_NS },
        spec: { type: 'NodePort', clusterIP: s.clusterIP, clusterIPs: [s.clusterIP], ipFamilies: [family], ports: [{ name: LONG_PORT, port: 80, protocol: 'TCP', nodePort: 30011 + i }] },
      },
      family,
      nullLogger,
    );
    if (p === undefined) throw new Error(`${s.name} must be a valid service port`);
    serviceMap.set(p.name.key, p);
    const ip = family === 'IPv6' ? 'fd00:10:244:1::12' : '10.244.1.12';
    const eps: Endpoint[] = s.pods.map(() => ({ ip, port: POD_TCP_PORT, key: joinHostPort(ip, POD_TCP_PORT), ready: true, serving: true, terminating: false, isLocal: true, nodeName: NODE_NAME, zone: '', zoneHints: null, nodeHints: null }));
    if (eps.length > 0) endpointsMap.set(p.name.key, eps);
  });
  return { serviceMap, endpointsMap };
}
