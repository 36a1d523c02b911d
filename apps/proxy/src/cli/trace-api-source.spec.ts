import { TestApiServer, type KubeObject } from '@kube-proxy/testing-apiserver';
import { runCli } from './run.js';
import { captureIO } from './testing/capture-io.js';

// trace and explain read the objects from the API server as the proxy does (--master / --kubeconfig),
// read-only, then stop their watches so the command ends.
const NODE: KubeObject = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'node-1' },
  status: { addresses: [{ type: 'InternalIP', address: '192.168.49.2' }] },
};
const SERVICE: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'api', namespace: 'prod' },
  spec: { type: 'ClusterIP', clusterIP: '10.96.5.5', clusterIPs: ['10.96.5.5'], ports: [{ name: 'grpc', port: 9090, targetPort: 9091, protocol: 'TCP' }] },
};
const SLICE: KubeObject = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'api-1', namespace: 'prod', labels: { 'kubernetes.io/service-name': 'api' } },
  addressType: 'IPv4',
  ports: [{ name: 'grpc', port: 9091, protocol: 'TCP' }],
  endpoints: [
    { addresses: ['10.244.1.5'], conditions: { ready: true }, nodeName: 'node-1' },
    { addresses: ['10.244.2.6'], conditions: { ready: false }, nodeName: 'node-2' },
  ],
};

describe('trace / explain over the API server', () => {
  it('trace and explain -o json from the objects the API server holds (iptables)', async () => {
    const server = await TestApiServer.start();
    try {
      for (const o of [NODE, SERVICE, SLICE]) server.create(o);
      const api = ['--proxy-mode=iptables', `--master=${server.url}`, '--kube-api-content-type=application/json', '--hostname-override=node-1'];
      let t = captureIO();
      expect(await runCli(['trace', ...api, '--from=192.168.49.2', '--to=10.96.5.5:9090', '-o', 'json'], t.streams)).toBe(0);
      expect(t.err()).toBe('');
      expect(JSON.parse(t.out())).toMatchObject({ verdict: 'DNAT', endpoints: ['10.244.1.5:9091'], service: 'prod/api:grpc' });
      t = captureIO();
      expect(await runCli(['explain', ...api, 'prod/api', '-o', 'json'], t.streams)).toBe(0);
      const explained = JSON.parse(t.out()) as { service: string; ports: { trafficClasses: { excluded: { endpoint: string; reason: string }[] }[] }[] };
      expect(explained.service).toBe('prod/api');
      expect(explained.ports[0]!.trafficClasses[0]!.excluded).toMatchObject([{ endpoint: '10.244.2.6:9091', reason: 'not-ready' }]);
      t = captureIO();
      expect(await runCli(['explain', ...api, 'prod/nope'], t.streams)).toBe(1);
      expect(t.err()).toBe("kube-proxy explain: service prod/nope not found in the API server's objects\n");
    } finally {
      await server.close();
    }
  }, 60_000);
});
