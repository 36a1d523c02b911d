/**
 * The scale-growth benchmark's input: the two list responses the API server sends the proxy at
 * startup (GET /api/v1/services, GET /apis/discovery.k8s.io/v1/endpointslices), as the bytes that
 * arrive. Objects are scale-cluster.ts's, dressed as a server returns them: list items without
 * apiVersion/kind (the List carries those), server-set metadata (creationTimestamp, resourceVersion,
 * managedFields), defaulted spec fields, and each endpoint's targetRef. That gives the source's trim
 * at decode (apps/proxy/src/sources/api/trim-object.ts) the fields it exists to drop.
 */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { serviceOf, sliceOf } from '../common/scale-cluster.js';

export interface ApiLists {
  readonly services: Buffer;
  readonly slices: Buffer;
  readonly serviceCount: number;
  readonly sliceCount: number;
  readonly endpointCount: number;
}

const CREATED = '2026-11-30T08:00:00Z';

/** One managedFields entry, the size of what a controller's server-side apply leaves (trimmed at decode). */
function managedFields(manager: string, apiVersion: string, fields: object): object[] {
  return [{ manager, operation: 'Update', apiVersion, time: CREATED, fieldsType: 'FieldsV1', fieldsV1: fields }];
}

function asListed(svc: V1Service, rv: number): object {
  const { apiVersion: _a, kind: _k, ...item } = svc;
  return {
    ...item,
    metadata: {
      ...item.metadata,
      resourceVersion: String(rv),
      creationTimestamp: CREATED,
      managedFields: managedFields('kubectl-client-side-apply', 'v1', { 'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} } }, 'f:type': {} } }),
    },
    spec: { ...item.spec, sessionAffinity: 'None', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster' },
    status: { loadBalancer: {} },
  };
}

function sliceAsListed(slice: V1EndpointSlice, rv: number): object {
  const { apiVersion: _a, kind: _k, ...item } = slice;
  const ns = item.metadata?.namespace ?? '';
  return {
    ...item,
    metadata: {
      ...item.metadata,
      uid: `uid-${item.metadata?.name ?? ''}`,
      resourceVersion: String(rv),
      generation: 1,
      creationTimestamp: CREATED,
      labels: { ...item.metadata?.labels, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: item.metadata?.labels?.['kubernetes.io/service-name'] ?? '', uid: 'uid-owner', controller: true, blockOwnerDeletion: true }],
      managedFields: managedFields('endpointslice-controller', 'discovery.k8s.io/v1', { 'f:addressType': {}, 'f:endpoints': {}, 'f:ports': {} }),
    },
    endpoints: item.endpoints.map((ep, k) => ({
      ...ep,
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace: ns, name: `${item.metadata?.name ?? ''}-pod-${k}`, uid: `uid-pod-${item.metadata?.name ?? ''}-${k}` },
    })),
  };
}

function listBytes(apiVersion: string, kind: string, items: object[]): Buffer {
  return Buffer.from(JSON.stringify({ apiVersion, kind, metadata: { resourceVersion: '999999' }, items }), 'utf8');
}

function lists(services: V1Service[], slices: V1EndpointSlice[]): ApiLists {
  return {
    services: listBytes('v1', 'ServiceList', services.map((s, i) => asListed(s, 1000 + i))),
    slices: listBytes('discovery.k8s.io/v1', 'EndpointSliceList', slices.map((s, i) => sliceAsListed(s, 500_000 + i))),
    serviceCount: services.length,
    sliceCount: slices.length,
    endpointCount: slices.reduce((n, s) => n + s.endpoints.length, 0),
  };
}

/** N ClusterIP Services with E endpoints each, one slice per Service (scale-cluster.ts). */
export function clusterApiLists(services: number, endpointsPerService: number): ApiLists {
  const svcs: V1Service[] = [];
  const slices: V1EndpointSlice[] = [];
  for (let i = 0; i < services; i++) {
    svcs.push(serviceOf(i));
    slices.push(sliceOf(i, endpointsPerService));
  }
  return lists(svcs, slices);
}

/**
 * One Service with `endpoints` endpoints spread over slices of `perSlice` (the EndpointSlice
 * controller's default cap is 100): the shape where a Service's cost depends on its slice count.
 */
export function bigServiceApiLists(endpoints: number, perSlice: number): ApiLists {
  const svc = serviceOf(0);
  const slices: V1EndpointSlice[] = [];
  for (let k = 0; k * perSlice < endpoints; k++) {
    // sliceOf numbers addresses from its index × its size, so slice k holds its own address range.
    const slice = sliceOf(k, perSlice);
    slice.endpoints = slice.endpoints.slice(0, Math.min(perSlice, endpoints - k * perSlice));
    slice.metadata = { ...slice.metadata, name: `svc-0-${String(k).padStart(5, '0')}`, namespace: svc.metadata!.namespace!, labels: { 'kubernetes.io/service-name': svc.metadata!.name! } };
    slices.push(slice);
  }
  return lists([svc], slices);
}
