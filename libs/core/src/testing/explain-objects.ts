/*
 * Small builders of the API objects `explain` reads (a Service, its EndpointSlices, a Node and a
 * configuration), for the tests of explain and of the commands that call it.
 */
import type { V1EndpointSlice, V1LoadBalancerIngress, V1Node, V1Service, V1ServicePort, V1ServiceSpec } from '@kubernetes/client-node';
import { applyDefaults, type KubeProxyConfigurationInput } from '../config/defaults.js';
import type { KubeProxyConfiguration } from '../config/types.js';

/** A Service `namespace/name` (default `ns/web`) with cluster IP 10.96.0.10 and one TCP port `http` 80. */
export function explainTestService(spec: Partial<V1ServiceSpec> = {}, o: { namespace?: string; name?: string; ingress?: V1LoadBalancerIngress[] } = {}): V1Service {
  const ports: V1ServicePort[] = [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }];
  return {
    metadata: { namespace: o.namespace ?? 'ns', name: o.name ?? 'web' },
    spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ipFamilies: ['IPv4'], ports, ...spec },
    ...(o.ingress ? { status: { loadBalancer: { ingress: o.ingress } } } : {}),
  };
}

/** One endpoint of a test slice; ready on `node-1` unless said otherwise. */
export interface TestSliceEndpoint {
  readonly ip: string;
  readonly node?: string;
  readonly zone?: string;
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
  readonly forZones?: readonly string[];
  readonly forNodes?: readonly string[];
}

/** An EndpointSlice of `ns/web` (or `o.service`) with port `http` TCP 8080 unless `o.ports` says otherwise. */
export function explainTestSlice(
  endpoints: readonly TestSliceEndpoint[],
  o: { name?: string; namespace?: string; service?: string; addressType?: 'IPv4' | 'IPv6'; ports?: { name: string; port: number; protocol?: string }[] } = {},
): V1EndpointSlice {
  return {
    addressType: o.addressType ?? 'IPv4',
    metadata: { namespace: o.namespace ?? 'ns', name: o.name ?? 'web-abc', labels: { 'kubernetes.io/service-name': o.service ?? 'web' } },
    ports: (o.ports ?? [{ name: 'http', port: 8080 }]).map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP' })),
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      nodeName: e.node ?? 'node-1',
      ...(e.zone !== undefined ? { zone: e.zone } : {}),
      conditions: { ready: e.ready ?? true, serving: e.serving ?? e.ready ?? true, terminating: e.terminating ?? false },
      ...(e.forZones || e.forNodes
        ? { hints: { ...(e.forZones ? { forZones: e.forZones.map((name) => ({ name })) } : {}), ...(e.forNodes ? { forNodes: e.forNodes.map((name) => ({ name })) } : {}) } }
        : {}),
    })),
  };
}

/** A Node `name` with InternalIP addresses, a zone label and pod CIDRs when given. */
export function explainTestNode(name: string, o: { addresses?: string[]; zone?: string; podCIDRs?: string[] } = {}): V1Node {
  return {
    metadata: { name, labels: o.zone === undefined ? {} : { 'topology.kubernetes.io/zone': o.zone } },
    spec: o.podCIDRs ? { podCIDR: o.podCIDRs[0], podCIDRs: o.podCIDRs } : {},
    status: { addresses: (o.addresses ?? []).map((address) => ({ type: 'InternalIP', address })) },
  };
}

/** The defaulted configuration with `input` applied (e.g. `{ mode: 'iptables', clusterCIDR: '10.244.0.0/16' }`). */
export function explainTestConfig(input: KubeProxyConfigurationInput = {}): KubeProxyConfiguration {
  return applyDefaults(input);
}
