import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@kube-proxy/core/testing';
import { type V1Service } from '@kube-proxy/core';
import { ObjectValidation } from '../validating-handlers.js';
import { ManifestSource, type ManifestHandlers } from './manifest-source.js';

/** `kubectl create service TYPE web-TYPE --tcp=80:8080 --dry-run=client -o yaml`, verbatim (kubectl v1.32). */
const kubectlService = (type: 'ClusterIP' | 'NodePort' | 'LoadBalancer') => {
  const name = `web-${type.toLowerCase()}`;
  return `apiVersion: v1
kind: Service
metadata:
  creationTimestamp: null
  labels:
    app: ${name}
  name: ${name}
spec:
  ports:
  - name: 80-8080
    port: 80
    protocol: TCP
    targetPort: 8080
  selector:
    app: ${name}
  type: ${type}
status:
  loadBalancer: {}
`;
};

/** `kubectl create deployment web --image=nginx --dry-run=client -o yaml`, verbatim. */
const kubectlDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  creationTimestamp: null
  labels:
    app: web
  name: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  strategy: {}
  template:
    metadata:
      creationTimestamp: null
      labels:
        app: web
    spec:
      containers:
      - image: nginx
        name: nginx
        resources: {}
status: {}
`;

const service = (name: string, spec: string, labels = '{}') =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, labels: ${labels}}\nspec: ${spec}\n`;

function handlers(added: string[]): ManifestHandlers {
  const noop = () => undefined;
  return {
    services: { onServiceAdd: (s: V1Service) => void added.push(s.metadata!.name!), onServiceUpdate: noop, onServiceDelete: noop, onServicesSynced: noop },
    endpointSlices: { onEndpointSliceAdd: noop, onEndpointSliceUpdate: noop, onEndpointSliceDelete: noop, onEndpointSlicesSynced: noop },
    node: { onNodeAdd: noop, onNodeUpdate: noop, onNodeDelete: noop, onNodeSynced: noop },
  };
}

describe('manifest objects that make no rules', () => {
  let dir: string;
  let logger: RecordingLogger;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-skipped-'));
    logger = new RecordingLogger();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const skips = () =>
    logger.entries
      .filter((e) => e.message === 'Skipping manifest object')
      .map((e) => ({ level: e.level, object: e.meta['object'], reason: e.meta['reason'], fix: e.meta['fix'], file: e.meta['file'] }));
  const summaries = () => logger.entries.filter((e) => e.message.startsWith('Ignored manifest objects'));
  const source = (extra: { nodeName?: string; serviceProxyName?: string } = {}) =>
    new ManifestSource({ path: dir, nodeName: extra.nodeName ?? 'node-1', serviceProxyName: extra.serviceProxyName ?? '', logger, pollIntervalMs: 60_000 });

  it("reports kubectl's clusterIP-less Services and a Deployment once each at the default verbosity, with reason and fix", async () => {
    const file = join(dir, 'app.yaml');
    await writeFile(file, [kubectlService('ClusterIP'), kubectlService('NodePort'), kubectlService('LoadBalancer'), kubectlDeployment].join('---\n'));
    const s = source();
    await s.loadInitial();
    const noClusterIP = {
      level: 'warn',
      reason: 'no spec.clusterIP (the API server would assign one; the manifest source does not): no rules',
      fix: 'set spec.clusterIP to an address in the service CIDR',
      file,
    };
    const andNodePort = { fix: `${noClusterIP.fix}, and spec.ports[0].nodePort in the node port range` };
    expect(skips()).toEqual([
      { ...noClusterIP, object: 'Service default/web-clusterip' },
      { ...noClusterIP, ...andNodePort, object: 'Service default/web-nodeport' },
      { ...noClusterIP, ...andNodePort, object: 'Service default/web-loadbalancer' },
      {
        level: 'info',
        object: 'Deployment web',
        reason: 'ignored kind Deployment: the proxy reads Service, EndpointSlice, Node, ServiceCIDR',
        fix: undefined,
        file,
      },
    ]);
    expect(summaries().map((e) => [e.level, e.meta['kinds'], e.meta['total']])).toEqual([['info', 'Deployment=1', 1]]);

    // The Services still pass validation and reach the Provider, which makes no rules for them (as upstream).
    const validation = new ObjectValidation(logger);
    const added: string[] = [];
    s.start(validation.wrap(handlers(added)));
    expect(added).toEqual(['web-clusterip', 'web-nodeport', 'web-loadbalancer']);
    expect(logger.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toHaveLength(3);

    // Re-read unchanged (touched: the file is parsed again), then with one object changed.
    logger.clear();
    await utimes(file, new Date(), new Date(Date.now() + 5000));
    await s.rescan();
    expect(logger.entries).toEqual([]);
    await writeFile(file, [kubectlService('ClusterIP').replace('port: 80\n', 'port: 81\n'), kubectlService('NodePort'), kubectlService('LoadBalancer'), kubectlDeployment].join('---\n'));
    await s.rescan();
    s.stop();
    expect(skips().map((e) => e.object)).toEqual(['Service default/web-clusterip']);
    expect(summaries()).toEqual([]);
  });

  it('warns once about node ports a NodePort Service leaves for the API server to allocate', async () => {
    const file = join(dir, 'np.yaml');
    const withIP = kubectlService('NodePort').replace('spec:\n', 'spec:\n  clusterIP: 10.96.0.20\n');
    const lbNoNodePorts = kubectlService('LoadBalancer').replace('spec:\n', 'spec:\n  clusterIP: 10.96.0.21\n  allocateLoadBalancerNodePorts: false\n');
    await writeFile(file, [withIP, lbNoNodePorts].join('---\n'));
    await source().loadInitial();
    expect(logger.entries.map((e) => [e.level, e.message, e.meta['object'], e.meta['reason'], e.meta['fix']])).toEqual([
      [
        'warn',
        'Serving manifest object in part',
        'Service default/web-nodeport',
        'spec.ports[0].nodePort unset (the API server would allocate it): no node port rule for that port',
        'set the nodePort to a port in the node port range (default 30000-32767)',
      ],
    ]);
  });

  it('gives headless, ExternalName and clusterIPs-only Services each their own reason; served ones say nothing', async () => {
    await writeFile(
      join(dir, 'svc.yaml'),
      [
        service('served', '{clusterIP: 10.96.0.10, ports: [{port: 80}]}'),
        service('hl', '{clusterIP: None, ports: [{port: 80}]}'),
        service('ext', '{type: ExternalName, externalName: example.com}'),
        service('plural', '{clusterIPs: [10.96.0.11], ports: [{port: 80}]}'),
      ].join('---\n'),
    );
    const s = source();
    await s.loadInitial();
    s.stop();
    expect(skips().map((e) => [e.level, e.object, e.reason, e.fix])).toEqual([
      ['info', 'Service default/hl', 'headless (spec.clusterIP None): no rules, as upstream', undefined],
      ['info', 'Service default/ext', 'type ExternalName: no rules, as upstream (DNS answers for it)', undefined],
      [
        'warn',
        'Service default/plural',
        'spec.clusterIPs without spec.clusterIP: the proxy reads spec.clusterIP, which the API server would copy from clusterIPs',
        'set spec.clusterIP: 10.96.0.11',
      ],
    ]);
    expect(summaries()).toEqual([]);
  });

  it("names the informers' label selector and the node name when they filter an object out", async () => {
    await writeFile(
      join(dir, 'labels.yaml'),
      [
        service('other', '{clusterIP: 10.96.0.2}', '{service.kubernetes.io/service-proxy-name: other}'),
        service('hl-label', '{clusterIP: 10.96.0.3}', '{service.kubernetes.io/headless: ""}'),
        'apiVersion: v1\nkind: Node\nmetadata: {name: node-2}\n',
        'apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n',
      ].join('---\n'),
    );
    await source().loadInitial();
    expect(skips().map((e) => [e.object, e.reason, e.fix])).toEqual([
      [
        'Service default/other',
        'labelled service.kubernetes.io/service-proxy-name=other: served by another proxy, as upstream',
        'remove the label, or start this proxy with --service-proxy-name=other',
      ],
      ['Service default/hl-label', "labelled service.kubernetes.io/headless: no rules, as upstream's informers filter it out", undefined],
      [
        'Node node-2',
        'not this node (this node is "node-1"): only the proxy\'s own Node is read',
        'name it "node-1", or start the proxy with --hostname-override=node-2',
      ],
    ]);
    expect(skips().every((e) => e.level === 'info')).toBe(true);
  });

  it('leaves an invalid Service to validation: one warning, not two', async () => {
    await writeFile(join(dir, 'bad.yaml'), service('bad', '{type: Bogus, ports: [{port: 80}]}'));
    const s = source();
    await s.loadInitial();
    s.start(new ObjectValidation(logger).wrap(handlers([])));
    s.stop();
    expect(skips()).toEqual([]);
    expect(logger.messages('warn')).toEqual(['Skipping invalid object (the API server would refuse it)']);
  });

  it('counts ignored kinds across files once per load that found new ones', async () => {
    await writeFile(join(dir, 'a.yaml'), kubectlDeployment + '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: prod}\n');
    const s = source();
    await s.loadInitial();
    await writeFile(join(dir, 'b.yaml'), kubectlDeployment.replace('name: web\nspec', 'name: api\nspec'));
    await s.rescan();
    s.stop();
    expect(skips().map((e) => e.object)).toEqual(['Deployment web', 'ConfigMap prod/cm', 'Deployment api']);
    expect(summaries().map((e) => e.meta['kinds'])).toEqual(['ConfigMap=1, Deployment=1', 'ConfigMap=1, Deployment=2']);
  });
});
