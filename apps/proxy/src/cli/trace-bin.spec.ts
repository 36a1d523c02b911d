import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpGet } from '../agent/testing/http-get.js';
import { KUBE_PROXY_BIN, REPO_ROOT, freePort, runKubeProxy } from './testing/kube-proxy-bin.js';

// The real `bin/kube-proxy trace` / `explain` on examples/, over the real mode tracers (iptables and
// nftables), as an operator runs them: the -o json contract, exit codes, and a running --dry-run
// proxy answering /debug on its metrics address.
const COMMON = ['--manifests=examples', '--hostname-override=node-1'];

const CONTRACT = ['verdict', 'endpoints', 'masquerade', 'service', 'path', 'reason'];

describe.each(['iptables', 'nftables'])('bin/kube-proxy trace / explain --proxy-mode=%s on examples/', (mode) => {
  it('trace -o json: the contract fields, DNAT to every endpoint of default/web:http', async () => {
    const r = await runKubeProxy(['trace', `--proxy-mode=${mode}`, ...COMMON, '--from=10.0.0.5', '--to=10.96.0.10:80', '-o', 'json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, unknown>;
    for (const field of CONTRACT) expect(j).toHaveProperty(field);
    expect(j).toMatchObject({
      verdict: 'DNAT',
      endpoints: ['10.244.1.11:8080', '10.244.1.12:8080', '10.244.2.21:8080'],
      masquerade: false,
      service: 'default/web:http',
      mode,
      family: 'IPv4',
    });
    const path = j['path'] as { where: unknown; rule: unknown }[];
    expect(path.length).toBeGreaterThan(0);
    for (const step of path) expect([typeof step.where, typeof step.rule]).toEqual(['string', 'string']);
    expect(typeof j['reason']).toBe('string');
  }, 90_000);

  it('a cluster IP no Service holds: exit 0, not DNAT, no endpoints, service null', async () => {
    const r = await runKubeProxy(['trace', `--proxy-mode=${mode}`, ...COMMON, '--from=10.0.0.5', '--to=10.96.0.77:80', '-o', 'json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, unknown>;
    expect(['ACCEPT', 'REJECT', 'DROP']).toContain(j['verdict']);
    expect(j).toMatchObject({ endpoints: [], service: null });
  }, 90_000);

  it('explain -o json: per port, the kernel objects of the mode with rule counts', async () => {
    const r = await runKubeProxy(['explain', `--proxy-mode=${mode}`, ...COMMON, 'default/web', '-o', 'json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { service: string; ports: { servicePort: string }[]; kernel: { mode: string; live: boolean; objects: { rules: number; family: string }[] } };
    expect(j.service).toBe('default/web');
    expect(j.ports.map((p) => p.servicePort)).toEqual(['default/web:http', 'default/web:https']);
    expect(j.kernel.mode).toBe(mode);
    expect(j.kernel.live).toBe(false);
    expect(j.kernel.objects.length).toBeGreaterThan(0);
    for (const o of j.kernel.objects) expect(o.rules).toBeGreaterThan(0);
  }, 90_000);
});

// A dual-stack Service (the examples are IPv4-only): IPv6 endpoints are spelled [IPv6]:PORT.
const DUAL_STACK = `
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  addresses: [{type: InternalIP, address: 192.168.49.2}, {type: InternalIP, address: 'fd00:49::2'}]
---
apiVersion: v1
kind: Service
metadata: {name: web6, namespace: default}
spec:
  ipFamilyPolicy: RequireDualStack
  ipFamilies: [IPv4, IPv6]
  clusterIP: 10.96.0.60
  clusterIPs: [10.96.0.60, 'fd00:10:96::60']
  ports: [{name: http, port: 80, targetPort: 8080, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web6-v6, namespace: default, labels: {kubernetes.io/service-name: web6}}
addressType: IPv6
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
  - {addresses: ['fd00:10:244::b'], conditions: {ready: true}, nodeName: node-2}
  - {addresses: ['fd00:10:244::a'], conditions: {ready: true}, nodeName: node-1}
`;

describe.each(['iptables', 'nftables'])('bin/kube-proxy trace --proxy-mode=%s, IPv6', (mode) => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-trace6-'));
    await writeFile(join(dir, 'dual.yaml'), DUAL_STACK);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('a dual-stack Service traced to its IPv6 cluster IP: [IPv6]:PORT endpoints, sorted', async () => {
    const r = await runKubeProxy(['trace', `--proxy-mode=${mode}`, `--manifests=${dir}`, '--hostname-override=node-1', '--from=fd00:1::5', '--to=[fd00:10:96::60]:80', '-o', 'json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      verdict: 'DNAT',
      endpoints: ['[fd00:10:244::a]:8080', '[fd00:10:244::b]:8080'],
      service: 'default/web6:http',
      family: 'IPv6',
    });
  }, 90_000);
});

describe('bin/kube-proxy trace / explain: bad input', () => {
  it.each([
    [['trace', ...COMMON, '--proxy-mode=iptables', '--from=10.0.0.5', '--to=10.96.0.10:http'], 'kube-proxy trace: malformed --to "10.96.0.10:http"'],
    [['explain', ...COMMON, '--proxy-mode=iptables', 'default/nope'], 'kube-proxy explain: service default/nope not found in --manifests examples'],
  ])('%j: one line on stderr, exit 1', async (args, line) => {
    const r = await runKubeProxy(args);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.err).toContain(line);
  }, 90_000);
});

describe('a running bin/kube-proxy --dry-run answers /debug on its metrics address', () => {
  it('/debug/trace and /debug/explain from its own state; 400 and 404 as JSON', async () => {
    const port = await freePort();
    const child = spawn(KUBE_PROXY_BIN, ['--proxy-mode=iptables', ...COMMON, '--dry-run', `--metrics-bind-address=127.0.0.1:${port}`], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'ignore'] });
    try {
      let trace: { status: number; body: string } | undefined;
      // Bounded: 60 tries, 0.5 s apart (the first sync of examples/ takes well under a second).
      for (let i = 0; i < 60 && trace?.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 500));
        trace = await httpGet(port, '/debug/trace?from=10.0.0.5&to=10.96.0.10:80').catch(() => undefined);
      }
      expect(trace?.status).toBe(200);
      expect(JSON.parse(trace!.body)).toMatchObject({ verdict: 'DNAT', service: 'default/web:http', mode: 'iptables', source: expect.any(String) });
      const explain = await httpGet(port, '/debug/explain?service=default/web');
      expect(explain.status).toBe(200);
      expect(JSON.parse(explain.body)).toMatchObject({ service: 'default/web', kernel: { mode: 'iptables' } });
      const bad = await httpGet(port, '/debug/trace?from=10.0.0.5&to=nowhere');
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body)).toHaveProperty('error');
      const unknown = await httpGet(port, '/debug/explain?service=default/nope');
      expect(unknown.status).toBe(404);
      expect(JSON.parse(unknown.body)).toEqual({ error: "service default/nope not found in this proxy's objects" });
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
    }
  }, 90_000);
});
