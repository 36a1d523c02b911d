/**
 * The real kubectl (/usr/bin/kubectl, a 1.32 client) against the test API server: discovery, OpenAPI,
 * and each verb an operator uses on Services and EndpointSlices, with the watch events and
 * resourceVersions an informer would see. kubectl runs with a private kubeconfig, HOME and cache dir.
 */
import { request } from 'node:http';
import { Kubectl } from './kubectl.js';
import { TestApiServer, type KubeObject } from './index.js';
import { waitUntil } from './wait.js';

interface Event {
  type: string;
  object: KubeObject;
}

/** Collects the events of one watch until closed. */
function watch(url: string): { events: Event[]; close: () => void } {
  const events: Event[] = [];
  let buf = '';
  const req = request(url, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buf += chunk;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) events.push(JSON.parse(line) as Event);
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  return { events, close: () => req.destroy() };
}

const SERVICE_YAML = (targetPort: number, extraPort = '') => `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  clusterIP: 10.96.0.10
  selector: {app: web}
  ports:
  - {name: http, port: 80, protocol: TCP, targetPort: ${targetPort}}
${extraPort}`;

const SLICE_YAML = (ip: string) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abcde
  namespace: default
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
endpoints:
- addresses: [${ip}]
  conditions: {ready: true}
ports:
- {name: http, port: 8080, protocol: TCP}
`;

const describeKubectl = Kubectl.available() ? describe : describe.skip;

describeKubectl('TestApiServer with the real kubectl', () => {
  let server: TestApiServer;
  let kubectl: Kubectl;
  let watches: Array<{ close: () => void }> = [];

  beforeEach(async () => {
    server = await TestApiServer.start();
    kubectl = new Kubectl({ server: server.url });
  });
  afterEach(async () => {
    for (const w of watches) w.close();
    watches = [];
    kubectl.dispose();
    await server.close();
  });

  const watchAll = (path: string) => {
    const w = watch(`${server.url}${path}?watch=true&resourceVersion=${server.resourceVersion()}`);
    watches.push(w);
    return w;
  };
  const svc = () => server.get({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' } });

  it('kubectl apply creates a Service through discovery + OpenAPI v3 (no --validate=false) and a watch sees ADDED', async () => {
    const w = watchAll('/api/v1/services');
    await waitUntil(() => server.activeWatches() === 1, { what: 'the watch' });
    const out = await kubectl.ok(['apply', '-f', kubectl.file('svc.yaml', SERVICE_YAML(8080))]);
    expect(out).toContain('service/web created');
    const created = svc();
    expect(created?.metadata?.annotations).toHaveProperty(['kubectl.kubernetes.io/last-applied-configuration']);
    // The server's defaults are filled in, as a real API server does.
    expect(created?.['spec']).toMatchObject({ type: 'ClusterIP', sessionAffinity: 'None', clusterIPs: ['10.96.0.10'], ipFamilies: ['IPv4'] });
    await waitUntil(() => w.events.length >= 1, { what: 'the ADDED event' });
    expect(w.events.map((e) => [e.type, e.object.metadata?.name, e.object.metadata?.resourceVersion])).toEqual([['ADDED', 'web', created?.metadata?.resourceVersion]]);

    // What kubectl asked: discovery (aggregated first), the OpenAPI v3 index and core/v1 document,
    // then the object and the create with server-side strict field validation.
    const paths = server.requests.map((r) => `${r.method} ${r.path}`);
    expect(paths).toEqual(expect.arrayContaining(['GET /api', 'GET /apis', 'GET /openapi/v3', 'GET /openapi/v3/api/v1', 'GET /api/v1/namespaces/default/services/web', 'POST /api/v1/namespaces/default/services']));
    const post = server.requests.find((r) => r.method === 'POST');
    expect(post?.query).toMatchObject({ fieldManager: 'kubectl-client-side-apply', fieldValidation: 'Strict' });
  }, 60_000);

  it('kubectl get and kubectl apply of a change: a strategic merge PATCH, a new resourceVersion and a MODIFIED event', async () => {
    await kubectl.ok(['apply', '-f', kubectl.file('svc.yaml', SERVICE_YAML(8080))]);
    const rv0 = Number(svc()?.metadata?.resourceVersion);
    expect(JSON.parse(await kubectl.ok(['get', 'service', 'web', '-o', 'json'])).spec.ports).toEqual([{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }]);
    expect(await kubectl.ok(['apply', '-f', kubectl.file('svc.yaml', SERVICE_YAML(8080))])).toContain('service/web unchanged');
    expect(Number(svc()?.metadata?.resourceVersion)).toBe(rv0);

    const w = watchAll('/api/v1/services');
    await waitUntil(() => server.activeWatches() === 1, { what: 'the watch' });
    const extra = '  - {name: metrics, port: 9100, protocol: TCP, targetPort: 9100}\n';
    expect(await kubectl.ok(['apply', '-f', kubectl.file('svc.yaml', SERVICE_YAML(9090, extra))])).toContain('service/web configured');
    const patch = server.requests.filter((r) => r.method === 'PATCH');
    expect(patch.map((r) => r.contentType)).toEqual(['application/strategic-merge-patch+json']);
    const after = svc();
    expect(after?.['spec']).toMatchObject({
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 9090 },
        { name: 'metrics', port: 9100, protocol: 'TCP', targetPort: 9100 },
      ],
    });
    expect(Number(after?.metadata?.resourceVersion)).toBeGreaterThan(rv0);
    await waitUntil(() => w.events.length >= 1, { what: 'the MODIFIED event' });
    expect(w.events.map((e) => [e.type, e.object.metadata?.resourceVersion])).toEqual([['MODIFIED', after?.metadata?.resourceVersion]]);

    // Dropping the extra port from the file removes it: the three-way patch deletes that list element.
    await kubectl.ok(['apply', '-f', kubectl.file('svc.yaml', SERVICE_YAML(9090))]);
    expect((svc()?.['spec'] as { ports: unknown[] }).ports).toEqual([{ name: 'http', port: 80, protocol: 'TCP', targetPort: 9090 }]);
  }, 60_000);

  it('kubectl patch of an EndpointSlice (strategic by default, merge and json types) replaces its endpoints', async () => {
    await kubectl.ok(['apply', '-f', kubectl.file('eps.yaml', SLICE_YAML('10.244.1.11'))]);
    const w = watchAll('/apis/discovery.k8s.io/v1/endpointslices');
    await waitUntil(() => server.activeWatches() === 1, { what: 'the watch' });
    const slice = () => server.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'web-abcde', namespace: 'default' } });

    await kubectl.ok(['patch', 'endpointslice', 'web-abcde', '-p', '{"endpoints":[{"addresses":["10.244.1.12"],"conditions":{"ready":true}}]}']);
    expect(slice()?.['endpoints']).toEqual([{ addresses: ['10.244.1.12'], conditions: { ready: true } }]);
    await kubectl.ok(['patch', 'endpointslice', 'web-abcde', '--type=merge', '-p', '{"ports":[{"name":"http","port":9090,"protocol":"TCP"}]}']);
    expect(slice()?.['ports']).toEqual([{ name: 'http', port: 9090, protocol: 'TCP' }]);
    await kubectl.ok(['patch', 'endpointslice', 'web-abcde', '--type=json', '-p', '[{"op":"add","path":"/endpoints/-","value":{"addresses":["10.244.1.13"]}}]']);
    expect((slice()?.['endpoints'] as unknown[]).length).toBe(2);

    expect(server.requests.filter((r) => r.method === 'PATCH').map((r) => r.contentType)).toEqual([
      'application/strategic-merge-patch+json',
      'application/merge-patch+json',
      'application/json-patch+json',
    ]);
    await waitUntil(() => w.events.length >= 3, { what: 'three MODIFIED events' });
    const rvs = w.events.map((e) => Number(e.object.metadata?.resourceVersion));
    expect(w.events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'MODIFIED']);
    expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
    expect(new Set(rvs).size).toBe(3);
  }, 60_000);

  it('kubectl delete removes the objects (DELETED events with a newer resourceVersion) and kubectl get then finds none', async () => {
    await kubectl.ok(['apply', '-f', kubectl.file('svc.yaml', SERVICE_YAML(8080)), '-f', kubectl.file('eps.yaml', SLICE_YAML('10.244.1.11'))]);
    const w = watchAll('/api/v1/services');
    await waitUntil(() => server.activeWatches() === 1, { what: 'the watch' });
    const before = Number(server.resourceVersion());
    const out = await kubectl.ok(['delete', '-f', kubectl.dir + '/svc.yaml', '-f', kubectl.dir + '/eps.yaml']);
    expect(out).toContain('service "web" deleted');
    expect(out).toContain('endpointslice.discovery.k8s.io "web-abcde" deleted');
    expect(svc()).toBeUndefined();
    await waitUntil(() => w.events.length >= 1, { what: 'the DELETED event' });
    expect(w.events[0]?.type).toBe('DELETED');
    expect(Number(w.events[0]?.object.metadata?.resourceVersion)).toBeGreaterThan(before);
    const none = await kubectl.run(['get', 'services,endpointslices']);
    expect(none.code).toBe(0);
    expect(none.stderr + none.stdout).toContain('No resources found');
    const missing = await kubectl.run(['delete', 'service', 'web']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('NotFound');
  }, 60_000);

  it('rejects an unknown field with strict server-side validation, as the real server does for kubectl apply', async () => {
    const r = await kubectl.run(['apply', '-f', kubectl.file('bad.yaml', SERVICE_YAML(8080).replace('  selector:', '  selectr:'))]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('strict decoding error: unknown field "spec.selectr"');
    expect(svc()).toBeUndefined();
  }, 60_000);
});

if (!Kubectl.available()) {
  it('kubectl tests skipped: no kubectl binary', () => {
    throw new Error('kubectl is not installed (expected at /usr/bin/kubectl or $KUBECTL); it is part of the test toolchain');
  });
}
