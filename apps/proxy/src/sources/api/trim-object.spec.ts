import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import { trimObject } from './trim-object.js';

const managedFields = [{ manager: 'kube-controller-manager', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': {} } }];

describe('trimObject', () => {
  it('drops managedFields, owner references and other unread metadata but keeps identity, labels and annotations', () => {
    const slice = trimObject<V1EndpointSlice>(
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: 'web-abcde',
          namespace: 'default',
          uid: 'u1',
          resourceVersion: '42',
          generation: 3,
          generateName: 'web-',
          creationTimestamp: new Date(0),
          deletionTimestamp: new Date(1),
          labels: { 'kubernetes.io/service-name': 'web' },
          annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-01-01T00:00:00Z' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'u0' }],
          finalizers: ['x'],
          managedFields,
        },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: [
          {
            addresses: ['10.1.0.1'],
            conditions: { ready: true, serving: true, terminating: false },
            nodeName: 'node-1',
            zone: 'a',
            hints: { forZones: [{ name: 'a' }] },
            targetRef: { kind: 'Pod', name: 'web-1', namespace: 'default', uid: 'p1' },
          },
        ],
      },
      'EndpointSlice',
    );
    expect(slice.metadata).toEqual({
      name: 'web-abcde',
      namespace: 'default',
      uid: 'u1',
      resourceVersion: '42',
      deletionTimestamp: new Date(1),
      labels: { 'kubernetes.io/service-name': 'web' },
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-01-01T00:00:00Z' },
    });
    expect(slice.endpoints).toEqual([
      { addresses: ['10.1.0.1'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'node-1', zone: 'a', hints: { forZones: [{ name: 'a' }] } },
    ]);
    expect(slice.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
  });

  it("keeps a Service's spec and status.loadBalancer, drops its status conditions", () => {
    const spec = { type: 'LoadBalancer', clusterIP: '10.96.0.1', ports: [{ port: 80 }] };
    const svc = trimObject<V1Service>(
      {
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default', managedFields },
        spec,
        status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] }, conditions: [{ type: 'x', status: 'True', lastTransitionTime: new Date(0), message: '', reason: 'r' }] },
      },
      'Service',
    );
    expect(svc).toEqual({ kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec, status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } });
  });

  it("keeps a Node's spec, labels and status.addresses, drops images, conditions and node info", () => {
    const node = trimObject<V1Node>(
      {
        kind: 'Node',
        metadata: { name: 'node-1', labels: { 'topology.kubernetes.io/zone': 'a' }, managedFields },
        spec: { podCIDR: '10.244.1.0/24', taints: [{ key: 'k', effect: 'NoSchedule' }] },
        status: {
          addresses: [{ type: 'InternalIP', address: '192.168.0.10' }],
          images: [{ names: ['registry.example/app:1'], sizeBytes: 1 }],
          conditions: [{ type: 'Ready', status: 'True' }],
          capacity: { cpu: '2' },
        },
      },
      'Node',
    );
    expect(node).toEqual({
      kind: 'Node',
      metadata: { name: 'node-1', labels: { 'topology.kubernetes.io/zone': 'a' } },
      spec: { podCIDR: '10.244.1.0/24', taints: [{ key: 'k', effect: 'NoSchedule' }] },
      status: { addresses: [{ type: 'InternalIP', address: '192.168.0.10' }] },
    });
  });

  it('returns the same object (trimmed in place) and leaves non-objects alone', () => {
    const svc: V1Service = { kind: 'Service', metadata: { name: 'a', managedFields } };
    expect(trimObject(svc, 'Service')).toBe(svc);
    expect(trimObject(null as unknown as V1Service, 'Service')).toBeNull();
  });
});
