import { jsonMergePatch } from './json-merge-patch.js';
import { jsonPatch } from './json-patch.js';
import { PatchError, type Json } from './json.js';
import { applyPatch, UnsupportedPatchType } from './patch.js';
import { strategicMergePatch } from './strategic-merge-patch.js';

/** The fields these tests read back; patch results are plain JSON. */
interface Obj {
  metadata: { labels?: Record<string, string>; finalizers?: string[]; annotations?: unknown };
  spec: { clusterIP?: string; ports: Array<{ port: number; targetPort?: number }> } & Record<string, unknown>;
  endpoints: unknown[];
  ports: unknown[];
}
const obj = (v: Json): Obj => v as unknown as Obj;

const service: Json = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', labels: { app: 'web', tier: 'front' }, finalizers: ['a'] },
  spec: {
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10'],
    ports: [
      { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
      { name: 'https', port: 443, protocol: 'TCP', targetPort: 8443 },
    ],
  },
};

const slice: Json = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'web-x' },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.244.1.11'] }, { addresses: ['10.244.1.12'] }],
  ports: [{ name: 'http', port: 8080 }],
};

describe('strategicMergePatch', () => {
  it('merges Service ports by their "port" key: a changed element keeps its other fields, new ones are appended', () => {
    const out = obj(strategicMergePatch(service, { spec: { ports: [{ port: 80, targetPort: 9090 }, { port: 8081, name: 'alt' }] } }, 'Service'));
    expect(out.spec.ports).toEqual([
      { name: 'http', port: 80, protocol: 'TCP', targetPort: 9090 },
      { name: 'https', port: 443, protocol: 'TCP', targetPort: 8443 },
      { port: 8081, name: 'alt' },
    ]);
    expect(out.spec.clusterIP).toBe('10.96.0.10');
  });

  it('removes a port with {"$patch":"delete"} and reorders by $setElementOrder, as kubectl apply sends them', () => {
    const reordered = obj(strategicMergePatch(service, { spec: { '$setElementOrder/ports': [{ port: 443 }, { port: 80 }], ports: [{ port: 443, targetPort: 1 }] } }, 'Service'));
    expect(reordered.spec.ports.map((p) => [p.port, p.targetPort])).toEqual([
      [443, 1],
      [80, 8080],
    ]);
    const removed = obj(strategicMergePatch(service, { spec: { ports: [{ port: 443, $patch: 'delete' }] } }, 'Service'));
    expect(removed.spec.ports).toEqual([{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }]);
  });

  it('replaces EndpointSlice endpoints and ports whole (atomic lists, no merge key)', () => {
    const out = obj(strategicMergePatch(slice, { endpoints: [{ addresses: ['10.244.1.13'] }], ports: [{ name: 'http', port: 9090 }] }, 'EndpointSlice'));
    expect(out.endpoints).toEqual([{ addresses: ['10.244.1.13'] }]);
    expect(out.ports).toEqual([{ name: 'http', port: 9090 }]);
  });

  it('deletes map keys given as null, merges primitive merge lists as sets and honours $deleteFromPrimitiveList', () => {
    const out = obj(strategicMergePatch(service, { metadata: { labels: { tier: null, v: '2' }, finalizers: ['b', 'a'], '$deleteFromPrimitiveList/finalizers': ['a'] } }, 'Service'));
    expect(out.metadata.labels).toEqual({ app: 'web', v: '2' });
    expect(out.metadata.finalizers).toEqual(['b']);
  });

  it('replaces an object under $patch: replace and a list containing {"$patch":"replace"}; $retainKeys drops other keys', () => {
    const replaced = obj(strategicMergePatch(service, { spec: { $patch: 'replace', clusterIP: '10.96.0.11' } }, 'Service'));
    expect(replaced.spec).toEqual({ clusterIP: '10.96.0.11' });
    const list = obj(strategicMergePatch(service, { spec: { ports: [{ $patch: 'replace' }, { port: 81 }] } }, 'Service'));
    expect(list.spec.ports).toEqual([{ port: 81 }]);
    const retained = obj(strategicMergePatch(service, { spec: { $retainKeys: ['ports'], ports: [{ port: 80, targetPort: 1 }] } }, 'Service'));
    expect(Object.keys(retained.spec)).toEqual(['ports']);
  });

  it('rejects a merge-list element without its merge key', () => {
    expect(() => strategicMergePatch(service, { spec: { ports: [{ name: 'x' }] } }, 'Service')).toThrow(PatchError);
  });
});

describe('jsonMergePatch and jsonPatch', () => {
  it('merge patch replaces lists and deletes null fields', () => {
    const out = obj(jsonMergePatch(service, { spec: { ports: [{ port: 1 }], clusterIPs: null } }));
    expect(out.spec).toEqual({ clusterIP: '10.96.0.10', ports: [{ port: 1 }] });
  });

  it('JSON patch applies add/replace/remove/move/copy/test in order and fails atomically', () => {
    const out = obj(jsonPatch(slice, [
      { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.244.1.21' },
      { op: 'add', path: '/endpoints/-', value: { addresses: ['10.244.1.23'] } },
      { op: 'remove', path: '/endpoints/1' },
      { op: 'copy', from: '/metadata/name', path: '/metadata/generateName' },
      { op: 'move', from: '/metadata/generateName', path: '/metadata/annotations' },
      { op: 'test', path: '/addressType', value: 'IPv4' },
    ]));
    expect(out.endpoints).toEqual([{ addresses: ['10.244.1.21'] }, { addresses: ['10.244.1.23'] }]);
    expect(out.metadata.annotations).toBe('web-x');
    expect(() => jsonPatch(slice, [{ op: 'remove', path: '/endpoints/0' }, { op: 'test', path: '/addressType', value: 'IPv6' }])).toThrow(PatchError);
    expect(obj(slice).endpoints).toHaveLength(2);
  });

  it('applyPatch dispatches on Content-Type and refuses server-side apply with UnsupportedPatchType', () => {
    expect(obj(applyPatch('application/merge-patch+json', service, { spec: { ports: [] } }, 'Service')).spec.ports).toEqual([]);
    expect(obj(applyPatch('application/strategic-merge-patch+json; charset=utf-8', service, { spec: { ports: [{ port: 80, name: 'h' }] } }, 'Service')).spec.ports).toHaveLength(2);
    expect(() => applyPatch('application/apply-patch+yaml', service, {}, 'Service')).toThrow(UnsupportedPatchType);
  });
});
