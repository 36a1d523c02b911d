import { defaultConfiguration, type CommandExecutor, type EndpointSliceHandler, type NodeHandler, type ServiceHandler, type V1EndpointSlice, type V1Service } from '@kube-proxy/core';
import { FakeClock, FakeSysctl, RecordingLogger } from '@kube-proxy/core/testing';
import { ProxyAgent } from '../agent/index.js';
import { httpGet } from '../agent/testing/http-get.js';
import { DebugState } from './debug-state.js';
import { debugRoutes } from './debug-routes.js';
import { backend } from './testing/fake-traced-backend.mjs';

const RULES = 'SVC default/web:http TCP 10.96.0.10:80 -> 10.244.1.11:8080,10.244.2.21:8080\nSVC default/empty: UDP 10.96.0.99:53 -> \n';

const none = (): void => undefined;
const noop: ServiceHandler = { onServiceAdd: none, onServiceUpdate: none, onServiceDelete: none, onServicesSynced: none };
const noopSlices: EndpointSliceHandler = { onEndpointSliceAdd: none, onEndpointSliceUpdate: none, onEndpointSliceDelete: none, onEndpointSlicesSynced: none };
const noopNode: NodeHandler = { onNodeAdd: none, onNodeUpdate: none, onNodeDelete: none, onNodeSynced: none };

/** A running proxy's metrics server with /debug over `state`, on a free port. */
async function serve(state: DebugState): Promise<{ get: (path: string) => Promise<{ status: number; body: unknown; type: unknown }>; stop: () => Promise<void> }> {
  const config = { ...defaultConfiguration(), metricsBindAddress: '127.0.0.1:0' };
  const agent = new ProxyAgent({
    config,
    mode: 'faketrace',
    nodeName: 'node-1',
    dryRun: true,
    serve: { healthz: false, metrics: true, serviceHealthChecks: false },
    logger: new RecordingLogger(),
    clock: new FakeClock(),
    sysctl: new FakeSysctl(),
    defaultMetrics: false,
    debug: debugRoutes(state),
  });
  await agent.start();
  const port = agent.metricsPort()!;
  return {
    get: async (path) => {
      const r = await httpGet(port, path);
      const isJson = String(r.headers['content-type']).startsWith('application/json');
      return { status: r.status, body: isJson ? JSON.parse(r.body) : r.body, type: r.headers['content-type'] };
    },
    stop: () => agent.stop(),
  };
}

function state(dryRun: boolean, executor: CommandExecutor = { run: () => Promise.reject(new Error('no commands')) }): DebugState {
  return new DebugState({
    plugin: backend,
    config: defaultConfiguration(),
    nodeName: 'node-1',
    families: ['IPv4'],
    executor,
    dryRun,
    nodeAddresses: () => Promise.resolve(['192.168.49.2']),
  });
}

describe('/debug/trace and /debug/explain on the metrics server (fake tracer)', () => {
  it('--dry-run: traces over the last block the proxy printed; 503 before the first one', async () => {
    const s = state(true);
    const server = await serve(s);
    try {
      expect(await server.get('/debug/trace?from=10.0.0.5&to=10.96.0.10:80')).toMatchObject({ status: 503, body: { error: 'no IPv4 rules written yet (the first sync has not finished)' } });
      const sink = s.recordingSink({ write: () => undefined });
      sink.write('# sync 1 full 2026-12-06T10:00:00.000Z\n');
      sink.write(RULES);
      const ok = await server.get('/debug/trace?from=10.0.0.5&to=10.96.0.10:80&protocol=TCP');
      expect(ok.status).toBe(200);
      expect(ok.type).toBe('application/json');
      expect(ok.body).toMatchObject({
        verdict: 'DNAT',
        endpoints: ['10.244.1.11:8080', '10.244.2.21:8080'],
        masquerade: false,
        service: 'default/web:http',
        mode: 'faketrace',
        family: 'IPv4',
        source: '--dry-run output',
      });
      const own = await server.get('/debug/trace?from=192.168.49.2&to=10.96.0.99:53&protocol=udp');
      expect(own.body).toMatchObject({ verdict: 'REJECT', masquerade: true, path: [{ where: 'fake/output' }] });
    } finally {
      await server.stop();
    }
  });

  it('bad input is a 400 with a JSON error; an unknown Service a 404; an unknown /debug path the usual 404', async () => {
    const s = state(true);
    const server = await serve(s);
    try {
      expect(await server.get('/debug/trace?from=10.0.0.5&to=10.96.0.10')).toMatchObject({
        status: 400,
        body: { error: 'malformed to "10.96.0.10": want IP:PORT ([IPv6]:PORT) with a port in 1-65535' },
      });
      expect(await server.get('/debug/trace?from=10.0.0.5&to=10.96.0.10:80&protocol=icmp')).toMatchObject({ status: 400, body: { error: 'unknown protocol "icmp": want TCP, UDP or SCTP' } });
      expect(await server.get('/debug/trace?from=fd00::1&to=[fd00::10]:80')).toMatchObject({ status: 400, body: { error: 'this proxy does not serve IPv6 (it serves IPv4)' } });
      expect(await server.get('/debug/explain')).toMatchObject({ status: 400, body: { error: 'service=NAMESPACE/NAME is required' } });
      expect(await server.get('/debug/explain?service=web')).toMatchObject({ status: 400, body: { error: 'malformed Service "web": want NAMESPACE/NAME' } });
      expect(await server.get('/debug/explain?service=default/nope')).toMatchObject({ status: 404, body: { error: "service default/nope not found in this proxy's objects" } });
      expect(await server.get('/debug/pprof')).toMatchObject({ status: 404, body: '404 page not found\n' });
      expect(await server.get('/proxyMode')).toMatchObject({ status: 200, body: 'faketrace' });
    } finally {
      await server.stop();
    }
  });

  it("outside --dry-run: traces over the kernel's rules, read when asked", async () => {
    const calls: string[] = [];
    const s = state(false, {
      run: (cmd, args) => {
        calls.push([cmd, ...args].join(' '));
        return Promise.resolve({ exitCode: 0, stdout: RULES, stderr: '' });
      },
    });
    const server = await serve(s);
    try {
      const r = await server.get('/debug/trace?from=10.0.0.5&to=10.96.0.10:80');
      expect(r).toMatchObject({ status: 200, body: { verdict: 'DNAT', source: 'fake-rules-save' } });
      expect(calls).toEqual(['fake-rules-save IPv4']);
    } finally {
      await server.stop();
    }
  });

  it("/debug/explain outside --dry-run: core's explanation of the Service it holds, the kernel's objects and the differences", async () => {
    const s = state(false, { run: () => Promise.resolve({ exitCode: 0, stdout: RULES, stderr: '' }) });
    const h = s.objects.tap({ services: noop, endpointSlices: noopSlices, node: noopNode });
    h.services.onServiceAdd({
      metadata: { namespace: 'default', name: 'web' },
      spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
    } as V1Service);
    h.endpointSlices.onEndpointSliceAdd({
      metadata: { namespace: 'default', name: 'web-1', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: ['10.244.1.11', '10.244.2.21', '10.244.3.31'].map((ip) => ({ addresses: [ip], conditions: { ready: true }, nodeName: 'node-2' })),
    } as V1EndpointSlice);
    const server = await serve(s);
    try {
      const r = await server.get('/debug/explain?service=default/web');
      expect(r.status).toBe(200);
      const body = r.body as { service: string; ports: { servicePort: string }[]; kernel: { live: boolean; objects: { name: string }[]; differences: string[] } };
      expect(body.service).toBe('default/web');
      expect(body.ports.map((p) => p.servicePort)).toEqual(['default/web:http']);
      expect(body.kernel.live).toBe(true);
      expect(body.kernel.objects.map((o) => o.name)).toEqual(['fake/default/web:http']);
      // 10.244.3.31 is ready in the slice; the kernel's rules do not send to it.
      expect(body.kernel.differences.join('\n')).toContain('10.244.3.31');
    } finally {
      await server.stop();
    }
  });

  it('the store holds what the source delivered, as the proxier sees it', () => {
    const s = state(true);
    const h = s.objects.tap({ services: noop, endpointSlices: noopSlices, node: noopNode });
    const svc = { metadata: { namespace: 'default', name: 'web' }, spec: {} } as V1Service;
    const slice = { metadata: { namespace: 'default', name: 'web-1' } } as V1EndpointSlice;
    h.services.onServiceAdd(svc);
    h.endpointSlices.onEndpointSliceAdd(slice);
    h.node.onNodeAdd({ metadata: { name: 'node-1' } });
    expect(s.objects.service('default/web')).toBe(svc);
    expect(s.objects.endpointSlices()).toEqual([slice]);
    expect(s.objects.node()?.metadata?.name).toBe('node-1');
    h.services.onServiceDelete(svc);
    h.endpointSlices.onEndpointSliceDelete(slice);
    h.node.onNodeDelete({ metadata: { name: 'node-1' } });
    expect(s.objects.services()).toEqual([]);
    expect(s.objects.endpointSlices()).toEqual([]);
    expect(s.objects.node()).toBeUndefined();
  });
});
