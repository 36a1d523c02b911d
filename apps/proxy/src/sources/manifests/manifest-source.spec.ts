import { mkdtemp, rm, writeFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nullLogger, type Logger } from '@kube-proxy/core';
import { ManifestSource, type ManifestHandlers } from './manifest-source.js';

function recorder(): { events: string[]; handlers: ManifestHandlers } {
  const events: string[] = [];
  const name = (o: { metadata?: { namespace?: string; name?: string } }) =>
    `${o.metadata?.namespace ? o.metadata.namespace + '/' : ''}${o.metadata?.name}`;
  return {
    events,
    handlers: {
      services: {
        onServiceAdd: (s) => events.push(`svc+ ${name(s)}`),
        onServiceUpdate: (_a, b) => events.push(`svc~ ${name(b)}`),
        onServiceDelete: (s) => events.push(`svc- ${name(s)}`),
        onServicesSynced: () => events.push('svc synced'),
      },
      endpointSlices: {
        onEndpointSliceAdd: (s) => events.push(`eps+ ${name(s)}`),
        onEndpointSliceUpdate: (_a, b) => events.push(`eps~ ${name(b)}`),
        onEndpointSliceDelete: (s) => events.push(`eps- ${name(s)}`),
        onEndpointSlicesSynced: () => events.push('eps synced'),
      },
      node: {
        onNodeAdd: (n) => events.push(`node+ ${name(n)}`),
        onNodeUpdate: (_a, b) => events.push(`node~ ${name(b)}`),
        onNodeDelete: (n) => events.push(`node- ${name(n)}`),
        onNodeSynced: () => events.push('node synced'),
      },
    },
  };
}

const svc = (name: string, ip: string, labels: Record<string, string> = {}) => `
apiVersion: v1
kind: Service
metadata: {name: ${name}, labels: ${JSON.stringify(labels)}}
spec: {clusterIP: ${ip}, ports: [{port: 80, protocol: TCP}]}
`;

describe('ManifestSource', () => {
  let dir: string;
  const warnings: string[] = [];
  const logger: Logger = { ...nullLogger, warn: (m) => void warnings.push(m), error: (m) => void warnings.push(m), child: () => logger };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-manifests-'));
    warnings.length = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function source(extra: Partial<{ serviceProxyName: string }> = {}) {
    return new ManifestSource({ path: dir, nodeName: 'node-1', serviceProxyName: extra.serviceProxyName ?? '', logger, pollIntervalMs: 60_000 });
  }

  it('delivers the initial list as adds followed by one Synced call per kind, defaulting the namespace', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('web', '10.96.0.10') + '---\n' + `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: prod, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: []
`);
    await writeFile(join(dir, 'b.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } },
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-2' } },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ignored' } },
    ] }));
    const s = source();
    await s.loadInitial();
    expect(s.node()?.metadata?.name).toBe('node-1');
    const r = recorder();
    s.start(r.handlers);
    s.stop();
    expect(r.events).toEqual(['svc+ default/web', 'eps+ prod/web-1', 'node+ node-1', 'svc synced', 'eps synced', 'node synced']);
    expect(warnings).toEqual([]);
  });

  it('with followChanges false (--once) delivers the same initial state, then holds no object and reads no change', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('web', '10.96.0.10'));
    const s = new ManifestSource({ path: dir, nodeName: 'node-1', serviceProxyName: '', logger, pollIntervalMs: 20, settleMs: 10, followChanges: false });
    await s.loadInitial();
    expect(s.counts().Service).toBe(1);
    const r = recorder();
    s.start(r.handlers);
    expect(r.events).toEqual(['svc+ default/web', 'svc synced', 'eps synced', 'node synced']);
    // The decoded objects are let go: nothing would diff against them.
    expect(s.counts()).toEqual({ Service: 0, EndpointSlice: 0, Node: 0, ServiceCIDR: 0 });
    await writeFile(join(dir, 'a.yaml'), svc('web', '10.96.0.11'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    s.stop();
    expect(r.events).toHaveLength(4);
  });

  it('follows edits, removals and new files as update/delete/add', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('web', '10.96.0.10') + '---\n' + svc('old', '10.96.0.11'));
    const s = source();
    await s.loadInitial();
    const r = recorder();
    s.start(r.handlers);
    r.events.length = 0;
    await writeFile(join(dir, 'a.yaml'), svc('web', '10.96.0.20'));
    await writeFile(join(dir, 'c.yml'), svc('new', '10.96.0.30'));
    await s.rescan();
    expect(r.events.sort()).toEqual(['svc+ default/new', 'svc- default/old', 'svc~ default/web'].sort());
    r.events.length = 0;
    await unlink(join(dir, 'c.yml'));
    await s.rescan();
    expect(r.events).toEqual(['svc- default/new']);
    s.stop();
  });

  it('keeps the previous objects of a file that stops parsing, and logs it', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('web', '10.96.0.10'));
    const s = source();
    await s.loadInitial();
    const r = recorder();
    s.start(r.handlers);
    r.events.length = 0;
    await writeFile(join(dir, 'a.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: [unclosed\n');
    await s.rescan();
    expect(r.events).toEqual([]);
    expect(warnings.some((w) => w.includes('keeping its previous objects'))).toBe(true);
    s.stop();
  });

  it('skips malformed objects with a warning and serves the rest', async () => {
    await writeFile(join(dir, 'a.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {}\n---\napiVersion: v2\nkind: Service\nmetadata: {name: x}\n---\n' + svc('ok', '10.96.0.10'));
    const s = source();
    await s.loadInitial();
    const r = recorder();
    s.start(r.handlers);
    s.stop();
    expect(r.events.filter((e) => e.startsWith('svc+'))).toEqual(['svc+ default/ok']);
    expect(warnings.filter((w) => w.startsWith('Skipping malformed object'))).toHaveLength(2);
  });

  it("applies upstream's label selector, and --service-proxy-name selects exactly its own services", async () => {
    await writeFile(join(dir, 'a.yaml'), [
      svc('plain', '10.96.0.1'),
      svc('other-proxy', '10.96.0.2', { 'service.kubernetes.io/service-proxy-name': 'other' }),
      svc('mine', '10.96.0.3', { 'service.kubernetes.io/service-proxy-name': 'mine' }),
      svc('headless-label', '10.96.0.4', { 'service.kubernetes.io/headless': '' }),
    ].join('---\n'));
    for (const [proxyName, expected] of [['', ['svc+ default/plain']], ['mine', ['svc+ default/mine']]] as const) {
      const s = source({ serviceProxyName: proxyName });
      await s.loadInitial();
      const r = recorder();
      s.start(r.handlers);
      s.stop();
      expect(r.events.filter((e) => e.startsWith('svc+'))).toEqual(expected);
    }
  });

  it('picks up a file change by itself through the filesystem watch', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('web', '10.96.0.10'));
    const s = source();
    await s.loadInitial();
    const r = recorder();
    s.start(r.handlers);
    r.events.length = 0;
    await writeFile(join(dir, 'a.yaml'), svc('web', '10.96.0.99'));
    const deadline = Date.now() + 5000;
    while (!r.events.includes('svc~ default/web') && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    s.stop();
    expect(r.events).toContain('svc~ default/web');
  });
});
