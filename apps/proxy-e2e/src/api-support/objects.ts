/**
 * Builders for the objects the API-integration suite creates on the TestApiServer: a Node, ClusterIP
 * Services and their EndpointSlices (with explicit endpoint conditions, so terminating endpoints can
 * be expressed). Shapes follow what the real API server returns.
 */
import type { KubeObject } from '@kube-proxy/testing-apiserver';

export const NODE_NAME = 'node-1';
export const NODE_IP = '192.168.50.1';
export const SERVICE_PROXY_NAME_LABEL = 'service.kubernetes.io/service-proxy-name';
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';

export function node(name = NODE_NAME, internalIP = NODE_IP): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } },
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
    status: {
      addresses: [
        { type: 'InternalIP', address: internalIP },
        { type: 'Hostname', address: name },
      ],
    },
  };
}

export interface SvcSpec {
  readonly name: string;
  readonly namespace?: string;
  readonly clusterIP: string;
  /** Service port 80 (name "http") → target port 8080 unless given. */
  readonly port?: number;
  readonly targetPort?: number;
  readonly labels?: Readonly<Record<string, string>>;
}

export function service(s: SvcSpec): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: s.name, namespace: s.namespace ?? 'default', ...(s.labels ? { labels: { ...s.labels } } : {}) },
    spec: {
      type: 'ClusterIP',
      clusterIP: s.clusterIP,
      clusterIPs: [s.clusterIP],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      sessionAffinity: 'None',
      selector: { app: s.name },
      ports: [{ name: 'http', port: s.port ?? 80, protocol: 'TCP', targetPort: s.targetPort ?? 8080 }],
    },
    status: { loadBalancer: {} },
  };
}

export interface Ep {
  readonly ip: string;
  /** Default true. */
  readonly ready?: boolean;
  /** Default: same as ready. */
  readonly serving?: boolean;
  /** Default false. */
  readonly terminating?: boolean;
  readonly nodeName?: string;
}

/** A terminating endpoint that still serves (a pod in its grace period). */
export function terminating(ip: string): Ep {
  return { ip, ready: false, serving: true, terminating: true };
}

export function endpointSlice(s: {
  readonly service: string;
  readonly namespace?: string;
  readonly endpoints: readonly (string | Ep)[];
  /** Default 8080. */
  readonly port?: number;
  /** Extra labels; the EndpointSlice controller mirrors the Service's labels (proxy name, headless). */
  readonly labels?: Readonly<Record<string, string>>;
}): KubeObject {
  const ns = s.namespace ?? 'default';
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${s.service}-x7k2p`,
      namespace: ns,
      labels: {
        'kubernetes.io/service-name': s.service,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
        ...s.labels,
      },
    },
    addressType: 'IPv4',
    endpoints: s.endpoints.map((e, i) => {
      const ep: Ep = typeof e === 'string' ? { ip: e } : e;
      const ready = ep.ready ?? true;
      return {
        addresses: [ep.ip],
        conditions: { ready, serving: ep.serving ?? ready, terminating: ep.terminating ?? false },
        nodeName: ep.nodeName ?? NODE_NAME,
        targetRef: { kind: 'Pod', name: `${s.service}-pod-${i}`, namespace: ns },
      };
    }),
    ports: [{ name: 'http', port: s.port ?? 8080, protocol: 'TCP' }],
  };
}

/** A Service and its EndpointSlice. */
export function serviceWithEndpoints(s: SvcSpec & { readonly endpoints: readonly (string | Ep)[] }): [KubeObject, KubeObject] {
  return [service(s), endpointSlice({ service: s.name, endpoints: s.endpoints, ...(s.namespace ? { namespace: s.namespace } : {}), ...(s.labels ? { labels: s.labels } : {}) })];
}
