import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';

/**
 * A synthetic cluster shaped like the shared datapath measurements: N ClusterIP services, one TCP
 * port each, E ready endpoints each (on other nodes), spread over 50 namespaces.
 */
export interface ScaleCluster {
  readonly services: V1Service[];
  readonly slices: V1EndpointSlice[];
}

function ipv4(base: number, n: number): string {
  const v = base + n;
  return `${(v >>> 24) & 255}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

const SERVICE_BASE = (10 << 24) | (96 << 16); // 10.96.0.0
const POD_BASE = (10 << 24) | (128 << 16); // 10.128.0.0

export function serviceOf(i: number): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace: `ns-${i % 50}`, uid: `uid-svc-${i}` },
    spec: {
      type: 'ClusterIP',
      clusterIP: ipv4(SERVICE_BASE, i + 1),
      clusterIPs: [ipv4(SERVICE_BASE, i + 1)],
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  };
}

/** The slice of service i; `shift` moves its first endpoint to a new address (one changed endpoint). */
export function sliceOf(i: number, endpointsPerService: number, shift = 0): V1EndpointSlice {
  const endpoints = [];
  for (let k = 0; k < endpointsPerService; k++) {
    const n = i * endpointsPerService + k + 1 + (k === 0 ? shift * 1_000_000 : 0);
    endpoints.push({ addresses: [ipv4(POD_BASE, n)], conditions: { ready: true }, nodeName: `node-${(i + k) % 100}` });
  }
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `svc-${i}-abcde`,
      namespace: `ns-${i % 50}`,
      labels: { 'kubernetes.io/service-name': `svc-${i}` },
      resourceVersion: String(shift + 1),
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints,
  };
}

export function scaleCluster(services: number, endpointsPerService: number): ScaleCluster {
  const out: ScaleCluster = { services: [], slices: [] };
  for (let i = 0; i < services; i++) {
    out.services.push(serviceOf(i));
    out.slices.push(sliceOf(i, endpointsPerService));
  }
  return out;
}

/** The cluster as one `kind: List` document, the shape `--manifests=FILE` reads. */
export function scaleClusterList(services: number, endpointsPerService: number): { apiVersion: 'v1'; kind: 'List'; items: object[] } {
  const c = scaleCluster(services, endpointsPerService);
  return { apiVersion: 'v1', kind: 'List', items: [...c.services, ...c.slices] };
}
