import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';

/** Builders for the manifests the proxy's `--manifests` source reads (Service, EndpointSlice, Node). */

export interface ServicePortSpec {
  readonly name: string;
  readonly port: number;
  readonly targetPort: number;
  readonly protocol?: 'TCP' | 'UDP';
  readonly nodePort?: number;
}

export interface ServiceSpec {
  readonly name: string;
  readonly namespace?: string;
  readonly type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  readonly clusterIP: string;
  readonly ports: readonly ServicePortSpec[];
  readonly sessionAffinity?: 'ClientIP';
  readonly externalTrafficPolicy?: 'Cluster' | 'Local';
  readonly healthCheckNodePort?: number;
  readonly externalIPs?: readonly string[];
  readonly loadBalancerIngressIPs?: readonly string[];
  readonly loadBalancerSourceRanges?: readonly string[];
}

export function service(s: ServiceSpec): Record<string, unknown> {
  const type = s.type ?? 'ClusterIP';
  const spec: Record<string, unknown> = {
    type,
    clusterIP: s.clusterIP,
    clusterIPs: [s.clusterIP],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    internalTrafficPolicy: 'Cluster',
    selector: { app: s.name },
    sessionAffinity: s.sessionAffinity ?? 'None',
    ports: s.ports.map((p) => ({
      name: p.name,
      port: p.port,
      protocol: p.protocol ?? 'TCP',
      targetPort: p.targetPort,
      ...(p.nodePort !== undefined ? { nodePort: p.nodePort } : {}),
    })),
  };
  if (s.sessionAffinity === 'ClientIP') spec['sessionAffinityConfig'] = { clientIP: { timeoutSeconds: 10800 } };
  if (type !== 'ClusterIP') spec['externalTrafficPolicy'] = s.externalTrafficPolicy ?? 'Cluster';
  else if (s.externalTrafficPolicy) spec['externalTrafficPolicy'] = s.externalTrafficPolicy;
  if (s.healthCheckNodePort !== undefined) spec['healthCheckNodePort'] = s.healthCheckNodePort;
  if (s.externalIPs) spec['externalIPs'] = [...s.externalIPs];
  if (s.loadBalancerSourceRanges) spec['loadBalancerSourceRanges'] = [...s.loadBalancerSourceRanges];
  if (type === 'LoadBalancer') spec['allocateLoadBalancerNodePorts'] = true;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: s.name, namespace: s.namespace ?? 'default', uid: `uid-svc-${s.name}` },
    spec,
    status: {
      loadBalancer: s.loadBalancerIngressIPs ? { ingress: s.loadBalancerIngressIPs.map((ip) => ({ ip, ipMode: 'VIP' })) } : {},
    },
  };
}

export interface EndpointSpec {
  readonly ip: string;
  readonly podName: string;
  readonly nodeName: string;
  readonly ready?: boolean;
}

export function endpointSlice(s: {
  readonly service: string;
  readonly namespace?: string;
  /** Slice name suffix; default `abcde`. */
  readonly suffix?: string;
  readonly ports: readonly { name: string; port: number; protocol?: 'TCP' | 'UDP' }[];
  readonly endpoints: readonly EndpointSpec[];
}): Record<string, unknown> {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${s.service}-${s.suffix ?? 'abcde'}`,
      namespace: s.namespace ?? 'default',
      labels: {
        'kubernetes.io/service-name': s.service,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType: 'IPv4',
    endpoints: s.endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true, serving: e.ready ?? true, terminating: false },
      nodeName: e.nodeName,
      targetRef: { kind: 'Pod', name: e.podName, namespace: s.namespace ?? 'default' },
    })),
    ports: s.ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP' })),
  };
}

export function nodeManifest(name: string, internalIP: string, podCIDR: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } },
    spec: { podCIDR, podCIDRs: [podCIDR] },
    status: {
      addresses: [
        { type: 'InternalIP', address: internalIP },
        { type: 'Hostname', address: name },
      ],
    },
  };
}

/**
 * Writes `obj` as YAML to `<dir>/<file>` atomically: a hidden temporary file (the proxy skips dot files)
 * renamed over the target, so the proxy never reads a half-written manifest.
 */
export function writeManifest(dir: string, file: string, obj: Record<string, unknown>): void {
  const tmp = join(dir, `.${file}.tmp`);
  writeFileSync(tmp, yaml.dump(obj, { noRefs: true, lineWidth: 200 }));
  renameSync(tmp, join(dir, file));
}

export function removeManifest(dir: string, file: string): void {
  rmSync(join(dir, file), { force: true });
}
