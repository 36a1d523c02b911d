import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { TestApiServer, type KubeObject } from '@kube-proxy/testing-apiserver';
import { runCli } from './run.js';
import { captureIO } from './testing/capture-io.js';

/*
 * Validation at the edge, seen from the command line: hostile objects from either source are skipped
 * with a warning naming them and their fields, and the rest of the node is still programmed. The names
 * are the ones that injected rules into (or broke) the iptables payload before validation existed.
 */

const INJECTED_NAME = 'evil" -j ACCEPT\n-A INPUT -j ACCEPT\n#';
const INJECTED_PORT = 'x" -j ACCEPT #';

const io = captureIO;

function service(name: string, clusterIP: string, portName = 'http'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { clusterIP, clusterIPs: [clusterIP], ports: [{ name: portName, port: 80, targetPort: 8080, protocol: 'TCP' }] },
  };
}

function slice(name: string, serviceName: string, ip: string, portName = 'http'): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': serviceName } },
    addressType: 'IPv4',
    ports: [{ name: portName, port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: [ip], conditions: { ready: true }, nodeName: 'node-1' }],
  };
}

const NODE: KubeObject = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'node-1' },
  spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
  status: { addresses: [{ type: 'InternalIP', address: '192.168.49.2' }] },
};

const HOSTILE: readonly KubeObject[] = [
  service(INJECTED_NAME, '10.96.0.66', INJECTED_PORT),
  slice('evil-abc12', INJECTED_NAME, '10.244.1.66', INJECTED_PORT),
  service('nul\0name', '10.96.0.67'),
  service('tab\tname', '10.96.0.68'),
  service('open"quote', '10.96.0.69'),
];
const GOOD: readonly KubeObject[] = [service('good', '10.96.0.70'), slice('good-abc12', 'good', '10.244.1.70')];

/** What a dry run of the hostile set must show: the good Service programmed, nothing injected, skips logged. */
function expectHostileSkipped(out: string, err: string): void {
  expect(out).toMatch(/^\*nat$/m);
  expect(out).toContain('-A KUBE-SERVICES -m comment --comment "default/good:http cluster IP" -m tcp -p tcp -d 10.96.0.70 --dport 80');
  expect(out).toContain('--to-destination 10.244.1.70:8080');
  for (const text of ['-A INPUT -j ACCEPT', 'evil', 'x\\" -j ACCEPT', '10.96.0.66', '10.96.0.67', '10.96.0.68', '10.96.0.69', '\0', '\t', 'open']) {
    expect(out).not.toContain(text);
  }
  // Each ruleset line is a complete rule or header (no quote left open, no line broken by a name).
  for (const line of out.split('\n')) expect((line.match(/"/g) ?? []).length % 2).toBe(0);

  const skips = err.split('\n').filter((l) => l.includes('Skipping invalid object'));
  expect(skips).toHaveLength(5);
  const evilService = skips.find((l) => l.includes('kind="Service"') && l.includes('object="default/evil\\" -j ACCEPT\\n-A INPUT -j ACCEPT\\n#"'));
  expect(evilService).toContain('field="metadata.name, spec.ports[0].name"');
  const evilSlice = skips.find((l) => l.includes('kind="EndpointSlice"') && l.includes('object="default/evil-abc12"'));
  expect(evilSlice).toContain('field="metadata.labels[kubernetes.io/service-name], ports[0].name"');
  for (const name of ['nul\\u0000name', 'tab\\tname', 'open\\"quote']) {
    expect(skips.find((l) => l.includes(`object="default/${name}"`))).toContain('field="metadata.name"');
  }
}

describe('kube-proxy CLI: invalid objects are skipped at the edge', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-validate-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('--manifests with hostile names: exits 0, programs the good Service, injects nothing, logs each skip with its fields', async () => {
    const manifests = join(dir, 'manifests');
    await rm(manifests, { recursive: true, force: true });
    await mkdir(manifests);
    await writeFile(join(manifests, 'hostile.yaml'), HOSTILE.map((o) => yaml.dump(o)).join('---\n'));
    await writeFile(join(manifests, 'good.yaml'), [NODE, ...GOOD].map((o) => yaml.dump(o)).join('---\n'));
    const t = io();
    const code = await runCli(['--proxy-mode=iptables', `--manifests=${manifests}`, '--hostname-override=node-1', '--dry-run', '--once'], t.streams);
    expect({ code, err: code === 0 ? '' : t.err() }).toEqual({ code: 0, err: '' });
    expectHostileSkipped(t.out(), t.err());
  });

  // The first API-source run in this file imports @kubernetes/client-node (~0.6 s on a quiet machine,
  // several seconds while CI runs other suites beside it): more than jest's default 5 s is allowed.
  it('the API server source goes through the same validation', async () => {
    const server = await TestApiServer.start();
    try {
      for (const o of [NODE, ...HOSTILE, ...GOOD]) server.create(o);
      const t = io();
      const code = await runCli(
        ['--proxy-mode=iptables', `--master=${server.url}`, '--kube-api-content-type=application/json', '--hostname-override=node-1', '--dry-run', '--once'],
        t.streams,
      );
      expect({ code, err: code === 0 ? '' : t.err() }).toEqual({ code: 0, err: '' });
      expectHostileSkipped(t.out(), t.err());
    } finally {
      await server.close();
    }
  }, 30_000);

  it('an invalid Node is not used for the node IPs', async () => {
    const manifests = join(dir, 'bad-node');
    await mkdir(manifests, { recursive: true });
    const badNode = { ...NODE, spec: { podCIDR: '10.244.1.0/24 -j ACCEPT' } };
    await writeFile(join(manifests, 'all.yaml'), [badNode, ...GOOD].map((o) => yaml.dump(o)).join('---\n'));
    const t = io();
    const code = await runCli(['--proxy-mode=iptables', `--manifests=${manifests}`, '--hostname-override=node-1', '--dry-run', '--once'], t.streams);
    expect(code).toBe(0);
    const skips = t.err().split('\n').filter((l) => l.includes('Skipping invalid object'));
    expect(skips).toHaveLength(1);
    expect(skips[0]).toContain('kind="Node" object="node-1" field="spec.podCIDR"');
    // Its InternalIP (192.168.49.2) is not taken: the proxy falls back as without a Node.
    expect(t.err()).toContain("Can't determine this node's IP");
    expect(t.out()).not.toContain('10.244.1.0/24 -j ACCEPT');
    expect(t.out()).toContain('default/good:http cluster IP');
  });
});
