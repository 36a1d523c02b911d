import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeConfiguration } from '@kube-proxy/core';
import { runCli } from './run.js';
import { captureIO } from './testing/capture-io.js';

const EXAMPLES = fileURLToPath(new URL('../../../../examples', import.meta.url));

const io = captureIO;

describe('kube-proxy CLI', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-cli-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('--help prints the flag reference on stdout', async () => {
    const t = io();
    expect(await runCli(['--help'], t.streams)).toBe(0);
    expect(t.out()).toContain('--proxy-mode');
    expect(t.out()).toContain('--manifests');
  });

  it('an unknown flag exits non-zero naming it', async () => {
    const t = io();
    expect(await runCli(['--proxy-mod=iptables'], t.streams)).toBe(1);
    expect(t.err()).toContain('--proxy-mod');
  });

  it('a config file with an unknown field or a bad value exits 1 naming the field', async () => {
    const unknown = join(dir, 'unknown.yaml');
    await writeFile(unknown, 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nconntrack:\n  maxPerCores: 1\n');
    let t = io();
    expect(await runCli(['--config', unknown], t.streams)).toBe(1);
    expect(t.err()).toContain('conntrack.maxPerCores');

    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\niptables:\n  masqueradeBit: 32\n');
    t = io();
    expect(await runCli(['--config', bad], t.streams)).toBe(1);
    expect(t.err()).toContain('iptables.masqueradeBit');
    expect(t.out()).toBe('');
  });

  it('--write-config-to writes the defaulted configuration, flags applied, and exits 0', async () => {
    const target = join(dir, 'written.yaml');
    const t = io();
    expect(await runCli(['--write-config-to', target, '--proxy-mode=iptables', '--cluster-cidr=10.244.0.0/16'], t.streams)).toBe(0);
    const cfg = decodeConfiguration(await readFile(target, 'utf8'), target);
    expect(cfg.mode).toBe('iptables');
    expect(cfg.clusterCIDR).toBe('10.244.0.0/16');
    expect(cfg.iptables.syncPeriod).toBe('30s');
  });

  it('an unknown mode exits 2 listing the registered modes', async () => {
    const t = io();
    expect(await runCli(['--proxy-mode=bpf', `--manifests=${EXAMPLES}`, '--dry-run', '--once'], t.streams)).toBe(2);
    expect(t.err()).toContain('registered modes: iptables, ipvs, nftables, userspace');
  });

  it('iptables --dry-run --once on the examples prints the whole ruleset on stdout and only that', async () => {
    const t = io();
    const code = await runCli(['--proxy-mode=iptables', `--manifests=${EXAMPLES}`, '--hostname-override=node-1', '--dry-run', '--once'], t.streams);
    expect(code).toBe(0);
    const out = t.out();
    expect(out.split('\n')[0]).toMatch(/^# sync 1 full /);
    expect(out).toMatch(/^\*filter$/m);
    expect(out).toMatch(/^\*nat$/m);
    expect(out.match(/^COMMIT$/gm)).toHaveLength(2);
    // default/web:http → 3 endpoints; the headless and ExternalName services get no rules.
    expect(out).toContain('-A KUBE-SERVICES -m comment --comment "default/web:http cluster IP" -m tcp -p tcp -d 10.96.0.10 --dport 80 -j KUBE-SVC-');
    expect(out).toContain('-m comment --comment "default/pending:http has no endpoints" -m tcp -p tcp -d 10.96.0.99 --dport 80 -j REJECT');
    expect(out).not.toContain('default/db');
    expect(out).not.toContain('default/search');
    // Logs went to stderr, none to stdout.
    expect(out).not.toMatch(/^[IWE]\d{4} /m);
    expect(t.err()).toMatch(/Using proxy mode/);
  });

  it('nftables --dry-run renders node ports on the examples\' Node address (nodePortAddresses primary), not on the machine\'s', async () => {
    const t = io();
    const code = await runCli(['--proxy-mode=nftables', `--manifests=${EXAMPLES}`, '--hostname-override=node-1', '--dry-run', '--once'], t.streams);
    expect(code).toBe(0);
    expect(t.out()).toContain('add element ip kube-proxy nodeport-ips { 192.168.49.2 }');
  });

  it('iptables --dry-run selects --nodeport-addresses among the Node object\'s addresses, as a real run among the host\'s', async () => {
    const t = io();
    const args = ['--proxy-mode=iptables', `--manifests=${EXAMPLES}`, '--hostname-override=node-1', '--nodeport-addresses=192.168.49.0/24', '--dry-run', '--once'];
    expect(await runCli(args, t.streams)).toBe(0);
    expect(t.out()).toMatch(/^-A KUBE-SERVICES .*-d 192\.168\.49\.2(\/32)? .*-j KUBE-NODEPORTS$/m);
  });

  it('ipvs --dry-run --once on the examples prints the sync line and the four sections, on any host', async () => {
    const t = io();
    const code = await runCli(['--proxy-mode=ipvs', `--manifests=${EXAMPLES}`, '--hostname-override=node-1', '--dry-run', '--once'], t.streams);
    expect(code).toBe(0);
    const lines = t.out().split('\n');
    expect(lines[0]).toMatch(/^# sync 1 full \S+Z$/);
    expect(lines.filter((l) => l.startsWith('# ')).slice(1)).toEqual(['# ipvs', '# ipset', '# kube-ipvs0', '# iptables']);
    const at = (h: string) => lines.indexOf(h);
    const ipvs = lines.slice(at('# ipvs') + 1, at('# ipset'));
    expect(ipvs).toContain('-A -t 10.96.0.10:80 -s rr');
    expect(ipvs.filter((l) => l.startsWith('-a -t 10.96.0.10:80 -r '))).toHaveLength(3);
    expect(ipvs.every((l) => /^-[Aa] (-t|-u|--sctp-service) /.test(l))).toBe(true);
    expect(lines.slice(at('# ipset') + 1, at('# kube-ipvs0'))).toContain('add KUBE-CLUSTER-IP 10.96.0.10,tcp:80');
    const bound = lines.slice(at('# kube-ipvs0') + 1, at('# iptables'));
    expect(bound).toContain('10.96.0.10/32');
    expect(bound.every((l) => /^[0-9.]+\/32$/.test(l))).toBe(true);
    const iptables = lines.slice(at('# iptables') + 1);
    expect(iptables).toContain('*nat');
    expect(iptables).toContain('*filter');
    expect(t.out()).not.toMatch(/^[IWE]\d{4} /m);
    expect(t.err()).toContain('The ipvs proxier is now deprecated');
  });

  it('loads a third-party backend with --backend-plugin and runs it through the same contract', async () => {
    const plugin = join(dir, 'echo-backend.mjs');
    await writeFile(
      plugin,
      `
      const PROVIDER = Symbol.for('kube-proxy.Provider');
      export const backend = {
        apiVersion: 'kube-proxy.backend/v1', name: 'echo', version: '9.9.9',
        detect: () => ({ usable: true, reason: 'always' }),
        register(container, ctx) {
          const services = new Set();
          let done; const first = new Promise((r) => (done = r));
          let stopped; const loop = new Promise((r) => (stopped = r));
          const provider = {
            onServiceAdd: (s) => services.add(s.metadata.namespace + '/' + s.metadata.name),
            onServiceUpdate() {}, onServiceDelete() {}, onServicesSynced() {},
            onEndpointSliceAdd() {}, onEndpointSliceUpdate() {}, onEndpointSliceDelete() {},
            onEndpointSlicesSynced() { ctx.dryRunSink.write([...services].sort().join(',') + '\\n'); done(); },
            onNodeAdd() {}, onNodeUpdate() {}, onNodeDelete() {}, onNodeSynced() {},
            sync() {}, syncLoop: () => loop, stop: () => stopped(), firstSync: () => first,
          };
          container.register(PROVIDER, { useValue: provider });
        },
      };`,
    );
    const t = io();
    const code = await runCli([`--backend-plugin=${plugin}`, '--proxy-mode=echo', `--manifests=${EXAMPLES}`, '--dry-run', '--once'], t.streams);
    expect(code).toBe(0);
    // Every Service the source serves reaches the plugin; what a Service means is core's business.
    expect(t.out()).toContain('default/api-ext,default/db,default/pending,default/search,default/web,default/web-nodeport');
  });

  it('refuses a plugin written for another contract version', async () => {
    const plugin = join(dir, 'old-backend.mjs');
    await writeFile(plugin, `export default { apiVersion: 'kube-proxy.backend/v0', name: 'old', version: '1.0.0', detect() {}, register() {} };`);
    const t = io();
    expect(await runCli([`--backend-plugin=${plugin}`, `--manifests=${EXAMPLES}`, '--dry-run', '--once'], t.streams)).toBe(1);
    expect(t.err()).toContain('unsupported backend plugin apiVersion "kube-proxy.backend/v0"');
  });
});
