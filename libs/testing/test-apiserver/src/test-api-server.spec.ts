import { request } from 'node:http';
import { TestApiServer, type KubeObject } from './index.js';
import { waitUntil } from './wait.js';

interface WatchEventJson {
  type: string;
  object: KubeObject & { code?: number; reason?: string };
}

/** A raw watch client: collects events until the server ends or cuts the stream. */
function openWatch(url: string): Promise<{ status: number; events: WatchEventJson[]; ended: Promise<'end' | 'error'>; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      const events: WatchEventJson[] = [];
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim() !== '') events.push(JSON.parse(line) as WatchEventJson);
        }
      });
      const ended = new Promise<'end' | 'error'>((r) => {
        res.on('end', () => r('end'));
        res.on('error', () => r('error'));
        res.on('aborted', () => r('error'));
      });
      resolve({ status: res.statusCode ?? 0, events, ended, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: KubeObject & { items?: KubeObject[]; code?: number } }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as KubeObject & { items?: KubeObject[] } };
}

const svc = (name: string, labels: Record<string, string> = {}, namespace = 'default'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace, labels },
  spec: { clusterIP: '10.0.0.1', ports: [{ port: 80 }] },
});

describe('TestApiServer', () => {
  let server: TestApiServer;
  const watches: Array<{ close: () => void }> = [];

  beforeEach(async () => {
    server = await TestApiServer.start();
  });
  afterEach(async () => {
    for (const w of watches.splice(0)) w.close();
    await server.close();
  });

  async function watch(path: string) {
    const w = await openWatch(server.url + path);
    watches.push(w);
    return w;
  }

  it('lists with a List kind, the global resourceVersion, selectors and namespaces', async () => {
    const a = server.create(svc('a', { app: 'web' }));
    server.create(svc('b', { app: 'db' }, 'prod'));
    server.create(svc('c', { 'service.kubernetes.io/headless': '' }));
    expect(a.metadata?.uid).toBeDefined();
    expect(Number(a.metadata?.resourceVersion)).toBeGreaterThan(0);

    const all = await getJson(`${server.url}/api/v1/services`);
    expect(all.status).toBe(200);
    expect(all.body.kind).toBe('ServiceList');
    expect(all.body.metadata?.resourceVersion).toBe(server.resourceVersion());
    expect(all.body.items?.map((i) => i.metadata?.name).sort()).toEqual(['a', 'b', 'c']);
    // Like the real server, list items carry no type meta.
    expect(all.body.items?.[0].kind).toBeUndefined();

    const sel = await getJson(`${server.url}/api/v1/services?labelSelector=${encodeURIComponent('!service.kubernetes.io/headless,app!=db')}`);
    expect(sel.body.items?.map((i) => i.metadata?.name)).toEqual(['a']);

    const ns = await getJson(`${server.url}/api/v1/namespaces/prod/services`);
    expect(ns.body.items?.map((i) => i.metadata?.name)).toEqual(['b']);

    const bad = await getJson(`${server.url}/api/v1/services?labelSelector=${encodeURIComponent('x in (a)')}`);
    expect(bad.status).toBe(400);
  });

  it('serves nodes with a metadata.name field selector, and single objects', async () => {
    server.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    server.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } });
    const l = await getJson(`${server.url}/api/v1/nodes?fieldSelector=metadata.name%3Dn2`);
    expect(l.body.kind).toBe('NodeList');
    expect(l.body.items?.map((i) => i.metadata?.name)).toEqual(['n2']);
    const one = await getJson(`${server.url}/api/v1/nodes/n1`);
    expect(one.body.kind).toBe('Node');
    expect((await getJson(`${server.url}/api/v1/nodes/zz`)).status).toBe(404);
  });

  it('streams watch events from a resourceVersion, with selector transitions as ADDED/DELETED', async () => {
    const rv0 = server.resourceVersion();
    const w = await watch(`/apis/discovery.k8s.io/v1/endpointslices?watch=true&resourceVersion=${rv0}&labelSelector=app%3Dweb`);
    expect(w.status).toBe(200);
    const slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 's1', namespace: 'ns', labels: { app: 'web' } }, addressType: 'IPv4', endpoints: [] };
    server.create(slice);
    server.update({ ...slice, endpoints: [{ addresses: ['10.1.1.1'] }] });
    server.update({ ...slice, metadata: { ...slice.metadata, labels: { app: 'other' } } }); // leaves the selection
    server.update({ ...slice, metadata: { ...slice.metadata, labels: { app: 'web' } } }); // re-enters
    server.delete(slice);
    server.create(svc('unrelated'));
    await waitUntil(() => w.events.length >= 5, { what: '5 events' });
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED', 'ADDED', 'DELETED']);
    // A selector "leave" carries the previous content with the new resourceVersion.
    expect(w.events[2].object.metadata?.labels).toEqual({ app: 'web' });
    const rvs = w.events.map((e) => Number(e.object.metadata?.resourceVersion));
    expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
    expect(new Set(rvs).size).toBe(5);
  });

  it('replays history after the requested RV, and sends the current state for RV 0', async () => {
    server.create(svc('a'));
    const mid = server.resourceVersion();
    server.create(svc('b'));
    server.update(svc('a', { v: '2' }));
    const w = await watch(`/api/v1/services?watch=true&resourceVersion=${mid}`);
    await waitUntil(() => w.events.length >= 2);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['ADDED b', 'MODIFIED a']);

    const w0 = await watch(`/api/v1/services?watch=1&resourceVersion=0`);
    await waitUntil(() => w0.events.length >= 2);
    expect(w0.events.map((e) => `${e.type} ${e.object.metadata?.name}`).sort()).toEqual(['ADDED a', 'ADDED b']);
  });

  it('answers a watch from a compacted RV with an ERROR 410 event, and a list with HTTP 410', async () => {
    server.create(svc('a'));
    const old = server.resourceVersion();
    server.create(svc('b'));
    server.compact();
    const w = await watch(`/api/v1/services?watch=true&resourceVersion=${Number(old) - 1}`);
    expect(await w.ended).toBe('end');
    expect(w.events).toHaveLength(1);
    expect(w.events[0].type).toBe('ERROR');
    expect(w.events[0].object.code).toBe(410);
    expect(w.events[0].object.reason).toBe('Expired');

    const l = await getJson(`${server.url}/api/v1/services?resourceVersion=${Number(old) - 1}&resourceVersionMatch=Exact`);
    expect(l.status).toBe(410);
    expect(l.body.code).toBe(410);
    // The current RV is still a valid starting point.
    const ok = await watch(`/api/v1/services?watch=true&resourceVersion=${server.resourceVersion()}`);
    server.create(svc('c'));
    await waitUntil(() => ok.events.length === 1);
  });

  it('can refuse a compacted watch with HTTP 410 instead', async () => {
    const s2 = await TestApiServer.start({ watchGone: 'http' });
    try {
      s2.create(svc('a'));
      s2.compact();
      const r = await fetch(`${s2.url}/api/v1/services?watch=true&resourceVersion=1`);
      expect(r.status).toBe(410);
      await r.arrayBuffer();
    } finally {
      await s2.close();
    }
  });

  it('sends BOOKMARKs only to watches that allow them, and ends watches after timeoutSeconds', async () => {
    const rv = server.resourceVersion();
    const withBm = await watch(`/api/v1/services?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`);
    const without = await watch(`/api/v1/services?watch=true&resourceVersion=${rv}`);
    server.create(svc('a'));
    server.sendBookmarks();
    await waitUntil(() => withBm.events.length >= 2);
    expect(withBm.events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
    expect(withBm.events[1].object.metadata?.resourceVersion).toBe(server.resourceVersion());
    await waitUntil(() => without.events.length >= 1);
    expect(without.events.map((e) => e.type)).toEqual(['ADDED']);
    expect(await withBm.ended).toBe('end');
  });

  it('records Event POSTs', async () => {
    const r = await getJson(`${server.url}/apis/events.k8s.io/v1/namespaces/default/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer t0k' },
      body: JSON.stringify({ apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'n1.abc' }, reason: 'Starting' }),
    });
    expect(r.status).toBe(201);
    const events = server.events();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ reason: 'Starting', metadata: { namespace: 'default', name: 'n1.abc' } });
    expect(server.requests.at(-1)?.authorization).toBe('Bearer t0k');
  });

  describe('writes and discovery over HTTP', () => {
    const put = (path: string, body: unknown, method = 'PUT', contentType = 'application/json') =>
      getJson(`${server.url}${path}`, { method, headers: { 'Content-Type': contentType }, body: JSON.stringify(body) });

    it('serves /version, legacy /api and /apis, group and group-version resource lists', async () => {
      expect((await getJson(`${server.url}/version`)).body).toMatchObject({ major: '1', minor: '32' });
      expect((await getJson(`${server.url}/api`)).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
      const groups = (await getJson(`${server.url}/apis`)).body as unknown as { groups: Array<{ name: string }> };
      expect(groups.groups.map((g) => g.name)).toEqual(['discovery.k8s.io', 'networking.k8s.io', 'events.k8s.io']);
      const core = (await getJson(`${server.url}/api/v1`)).body as unknown as { resources: Array<{ name: string; namespaced: boolean; verbs: string[] }> };
      expect(core.resources.find((r) => r.name === 'services')).toMatchObject({ namespaced: true, verbs: expect.arrayContaining(['patch', 'watch']) });
      expect(core.resources.find((r) => r.name === 'nodes')?.namespaced).toBe(false);
      const slices = (await getJson(`${server.url}/apis/discovery.k8s.io/v1`)).body as unknown as { groupVersion: string; resources: Array<{ kind: string }> };
      expect(slices).toMatchObject({ groupVersion: 'discovery.k8s.io/v1', resources: [{ kind: 'EndpointSlice' }] });
      expect((await getJson(`${server.url}/apis/discovery.k8s.io`)).body).toMatchObject({ kind: 'APIGroup', preferredVersion: { version: 'v1' } });
    });

    it('answers aggregated discovery when asked for it, and the OpenAPI v3 index', async () => {
      const res = await fetch(`${server.url}/apis`, { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' } });
      expect(res.headers.get('content-type')).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
      expect(await res.json()).toMatchObject({ kind: 'APIGroupDiscoveryList', items: [{ metadata: { name: 'discovery.k8s.io' } }, { metadata: { name: 'networking.k8s.io' } }, { metadata: { name: 'events.k8s.io' } }] });
      const index = (await getJson(`${server.url}/openapi/v3`)).body as unknown as { paths: Record<string, { serverRelativeURL: string }> };
      expect(Object.keys(index.paths).sort()).toEqual(['api/v1', 'apis/discovery.k8s.io/v1', 'apis/events.k8s.io/v1', 'apis/networking.k8s.io/v1']);
      const doc = (await getJson(`${server.url}${index.paths['api/v1']?.serverRelativeURL}`)).body as unknown as { paths: Record<string, { patch?: { parameters: Array<{ name: string }> } }> };
      expect(doc.paths['/api/v1/namespaces/{namespace}/services/{name}']?.patch?.parameters.map((p) => p.name)).toContain('fieldValidation');
      expect((await getJson(`${server.url}/openapi/v2`)).status).toBe(404);
    });

    it('PATCH applies a strategic merge patch and commits a MODIFIED change; a no-op patch commits nothing', async () => {
      server.create(svc('web'));
      const w = await watch(`/api/v1/services?watch=true&resourceVersion=${server.resourceVersion()}`);
      const patched = await put('/api/v1/namespaces/default/services/web', { spec: { ports: [{ port: 80, targetPort: 9090 }] } }, 'PATCH', 'application/strategic-merge-patch+json');
      expect(patched.status).toBe(200);
      expect(patched.body['spec']).toMatchObject({ ports: [{ port: 80, targetPort: 9090, protocol: 'TCP' }] });
      const rv = patched.body.metadata?.resourceVersion;
      const again = await put('/api/v1/namespaces/default/services/web', { spec: { ports: [{ port: 80, targetPort: 9090 }] } }, 'PATCH', 'application/strategic-merge-patch+json');
      expect(again.body.metadata?.resourceVersion).toBe(rv);
      await waitUntil(() => w.events.length === 1);
      expect(w.events.map((e) => [e.type, e.object.metadata?.resourceVersion])).toEqual([['MODIFIED', rv]]);
      expect((await put('/api/v1/namespaces/default/services/web', {}, 'PATCH', 'application/apply-patch+yaml')).status).toBe(415);
      expect((await put('/api/v1/namespaces/default/services/none', {}, 'PATCH', 'application/merge-patch+json')).status).toBe(404);
    });

    it('PATCH of nodes/{name}/status merges conditions by type and changes nothing but the status', async () => {
      const ready = { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: '2026-12-06T17:00:00Z', lastTransitionTime: '2026-12-06T16:00:00Z' };
      server.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, spec: { podCIDR: '10.244.0.0/24' }, status: { conditions: [ready] } });
      const w = await watch(`/api/v1/nodes?watch=true&resourceVersion=${server.resourceVersion()}`);
      const cond = { type: 'KubeProxyReady', status: 'True', reason: 'RulesProgrammed', message: 'm', lastHeartbeatTime: '2026-12-06T17:01:00Z', lastTransitionTime: '2026-12-06T17:01:00Z' };
      const smp = 'application/strategic-merge-patch+json';
      // A spec change in a status write is ignored, as on the real server.
      const r = await put('/api/v1/nodes/node-1/status', { spec: { podCIDR: '10.9.0.0/24' }, status: { conditions: [cond] } }, 'PATCH', smp);
      expect(r.status).toBe(200);
      const stored = server.get({ kind: 'Node', metadata: { name: 'node-1' } }) as KubeObject & { spec: unknown; status: { conditions: unknown[] } };
      expect(stored.status.conditions).toEqual([ready, cond]);
      expect(stored.spec).toEqual({ podCIDR: '10.244.0.0/24' });
      // The same type again replaces that condition only.
      await put('/api/v1/nodes/node-1/status', { status: { conditions: [{ ...cond, status: 'False', reason: 'SyncFailing' }] } }, 'PATCH', smp);
      expect((server.get({ kind: 'Node', metadata: { name: 'node-1' } }) as unknown as { status: { conditions: Array<{ type: string; status: string }> } }).status.conditions.map((c) => `${c.type}=${c.status}`)).toEqual([
        'Ready=True',
        'KubeProxyReady=False',
      ]);
      await waitUntil(() => w.events.length === 2);
      expect(w.events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED']);
      expect((await getJson(`${server.url}/api/v1/nodes/node-1/status`)).body.metadata?.name).toBe('node-1');
      expect((await put('/api/v1/nodes/none/status', { status: {} }, 'PATCH', smp)).status).toBe(404);
      expect((await put('/api/v1/nodes/node-1/status', {}, 'POST')).status).toBe(405);
      expect((await getJson(`${server.url}/api/v1/nodes/node-1/other`)).status).toBe(404);
    });

    it('PUT with a stale resourceVersion is a 409 Conflict; POST of an existing name is 409 AlreadyExists', async () => {
      const created = server.create(svc('web'));
      server.update(svc('web', { v: '2' }));
      const stale = await put('/api/v1/namespaces/default/services/web', { ...svc('web'), metadata: { ...created.metadata } });
      expect(stale.body).toMatchObject({ code: 409, reason: 'Conflict' });
      const dup = await put('/api/v1/namespaces/default/services', svc('web'), 'POST');
      expect(dup.body).toMatchObject({ code: 409, reason: 'AlreadyExists' });
    });
  });

  describe('faults', () => {
    it('dropAllWatches cuts the connection (or ends it gracefully)', async () => {
      const w1 = await watch(`/api/v1/services?watch=true&resourceVersion=${server.resourceVersion()}`);
      const w2 = await watch(`/api/v1/nodes?watch=true&resourceVersion=${server.resourceVersion()}`);
      await waitUntil(() => server.activeWatches() === 2);
      expect(server.dropAllWatches()).toBe(2);
      expect(await w1.ended).toBe('error');
      expect(await w2.ended).toBe('error');
      expect(server.activeWatches()).toBe(0);

      const w3 = await watch(`/api/v1/services?watch=true&resourceVersion=${server.resourceVersion()}`);
      server.dropAllWatches({ graceful: true });
      expect(await w3.ended).toBe('end');
    });

    it('failRequests answers the next n requests with an error Status', async () => {
      server.failRequests(2, 503);
      expect((await getJson(`${server.url}/api/v1/services`)).status).toBe(503);
      const second = await getJson(`${server.url}/api/v1/services`);
      expect(second.body).toMatchObject({ kind: 'Status', code: 503 });
      expect((await getJson(`${server.url}/api/v1/services`)).status).toBe(200);
    });

    it('refuseConnections closes sockets for a while, then serves again', async () => {
      const w = await watch(`/api/v1/services?watch=true&resourceVersion=${server.resourceVersion()}`);
      server.refuseConnections(300);
      expect(await w.ended).toBe('error');
      await expect(fetch(`${server.url}/api/v1/services`)).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 350));
      expect((await getJson(`${server.url}/api/v1/services`)).status).toBe(200);
    });

    it('stallWatches keeps watches open but silent, ignoring their timeout', async () => {
      const w = await watch(`/api/v1/services?watch=true&resourceVersion=${server.resourceVersion()}&timeoutSeconds=1`);
      server.stallWatches();
      server.create(svc('a'));
      const w2 = await watch(`/api/v1/services?watch=true&resourceVersion=0&timeoutSeconds=1`);
      expect(w2.status).toBe(200);
      const outcome = await Promise.race([w.ended, new Promise((r) => setTimeout(() => r('still open'), 1300))]);
      expect(outcome).toBe('still open');
      expect(w.events).toEqual([]);
      expect(w2.events).toEqual([]);
      server.clearFaults();
    });

    it('stopListening refuses connections (ECONNREFUSED) and startListening serves the same store on the same port', async () => {
      server.create(svc('kept'));
      const url = server.url;
      const w = await watch(`/api/v1/services?watch=true&resourceVersion=${server.resourceVersion()}`);
      await server.stopListening();
      expect(server.listening).toBe(false);
      expect(await w.ended).toBe('error');
      await expect(fetch(`${url}/api/v1/services`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
      server.create(svc('while-down'));
      await server.startListening();
      expect(server.url).toBe(url);
      const list = await getJson(`${url}/api/v1/services`);
      expect(list.body.items?.map((o) => o.metadata?.name).sort()).toEqual(['kept', 'while-down']);
    });

    it('stallOpenWatches silences only the watches open now; a new watch gets events', async () => {
      const old = await watch(`/api/v1/services?watch=true&resourceVersion=${server.resourceVersion()}&timeoutSeconds=1`);
      await waitUntil(() => server.activeWatches() === 1);
      expect(server.stallOpenWatches()).toBe(1);
      const fresh = await watch(`/api/v1/services?watch=true&resourceVersion=${server.resourceVersion()}`);
      server.create(svc('a'));
      await waitUntil(() => fresh.events.length === 1);
      const outcome = await Promise.race([old.ended, new Promise((r) => setTimeout(() => r('still open'), 1300))]);
      expect(outcome).toBe('still open');
      expect(old.events).toEqual([]);
    });

    it('delayResponses delays every response', async () => {
      server.delayResponses(200);
      const t0 = Date.now();
      expect((await getJson(`${server.url}/api/v1/services`)).status).toBe(200);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
      server.delayResponses(0);
    });
  });
});
