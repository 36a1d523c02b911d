import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../cli/run.js';
import { captureIO } from '../../cli/testing/capture-io.js';

const kubectlClusterIP = `apiVersion: v1
kind: Service
metadata:
  creationTimestamp: null
  labels:
    app: web
  name: web
spec:
  ports:
  - name: 80-8080
    port: 80
    protocol: TCP
    targetPort: 8080
  selector:
    app: web
  type: ClusterIP
status:
  loadBalancer: {}
`;

describe('kube-proxy --manifests with YAML from kubectl create --dry-run', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-manifests-cli-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says at the default verbosity why the Service gets no rule and how to fix it', async () => {
    await writeFile(join(dir, 'web.yaml'), kubectlClusterIP + '---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n');
    const t = captureIO();
    const code = await runCli(['--proxy-mode=iptables', `--manifests=${dir}`, '--hostname-override=node-1', '--dry-run', '--once'], t.streams);
    expect(code).toBe(0);
    expect(t.out()).not.toContain('default/web');
    const lines = t.err().split('\n');
    const web = lines.filter((l) => l.includes('Skipping manifest object') && l.includes('Service default/web'));
    expect(web).toHaveLength(1);
    expect(web[0]).toMatch(/^W\d{4} /);
    expect(web[0]).toContain('no spec.clusterIP');
    expect(web[0]).toContain('set spec.clusterIP to an address in the service CIDR');
    expect(lines.filter((l) => l.includes('ignored kind Deployment'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('Ignored manifest objects of kinds the proxy does not read'))).toHaveLength(1);
  });
});
