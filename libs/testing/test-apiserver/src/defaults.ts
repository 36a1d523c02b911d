/**
 * The defaults the real API server fills in when a client writes a Service or EndpointSlice without
 * them (k8s.io/kubernetes pkg/apis/core/v1/defaults.go, discovery/v1 defaults), so that objects
 * written by kubectl look like what an informer receives from a cluster: Service type ClusterIP,
 * sessionAffinity None, internalTrafficPolicy Cluster, port protocol TCP and targetPort = port,
 * single-stack IPv4 families for a ClusterIP given as IPv4; EndpointSlice port protocol TCP. Not done:
 * ClusterIP and NodePort allocation (a Service without spec.clusterIP stays without one).
 */
import type { KubeObject } from './object-store.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function defaultService(o: KubeObject): KubeObject {
  const spec: Obj = isObj(o['spec']) ? { ...o['spec'] } : {};
  spec['type'] ??= 'ClusterIP';
  spec['sessionAffinity'] ??= 'None';
  if (spec['type'] !== 'ExternalName') spec['internalTrafficPolicy'] ??= 'Cluster';
  if (Array.isArray(spec['ports'])) {
    spec['ports'] = spec['ports'].map((p: unknown) => (isObj(p) ? { ...p, protocol: p['protocol'] ?? 'TCP', targetPort: p['targetPort'] ?? p['port'] } : p));
  }
  const ip = spec['clusterIP'];
  if (typeof ip === 'string' && ip !== '' && ip !== 'None') {
    spec['clusterIPs'] ??= [ip];
    spec['ipFamilies'] ??= [ip.includes(':') ? 'IPv6' : 'IPv4'];
    spec['ipFamilyPolicy'] ??= 'SingleStack';
  }
  return { ...o, spec };
}

function defaultEndpointSlice(o: KubeObject): KubeObject {
  if (!Array.isArray(o['ports'])) return o;
  return { ...o, ports: o['ports'].map((p: unknown) => (isObj(p) ? { ...p, protocol: p['protocol'] ?? 'TCP' } : p)) };
}

/** `obj` with the API server's defaults for its kind filled in (other kinds unchanged). */
export function withDefaults(kind: string, obj: KubeObject): KubeObject {
  if (kind === 'Service') return defaultService(obj);
  if (kind === 'EndpointSlice') return defaultEndpointSlice(obj);
  return obj;
}
