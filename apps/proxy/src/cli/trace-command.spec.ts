import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from './run.js';
import { captureIO } from './testing/capture-io.js';

// Each runs the CLI in-process (host detection, the source, a sync): seconds on a busy machine.
const SLOW = 60_000;

// `kube-proxy trace` end to end over a fake mode (trace/testing/fake-traced-backend.mjs): the CLI's
// flags, rule sources, node addresses, output and exit codes, whatever the real modes' tracers say.
const EXAMPLES = fileURLToPath(new URL('../../../../examples', import.meta.url));
const FAKE = fileURLToPath(new URL('../trace/testing/fake-traced-backend.mjs', import.meta.url));
const BASE = [`--backend-plugin=${FAKE}`, '--proxy-mode=faketrace', `--manifests=${EXAMPLES}`, '--hostname-override=node-1'];

async function trace(...argv: string[]) {
  const t = captureIO();
  const code = await runCli(['trace', ...BASE, ...argv], t.streams);
  return { code, out: t.out(), err: t.err() };
}

describe('kube-proxy trace (over a fake mode)', () => {
  it('-o json: one JSON object with the contract fields, the rules of --manifests as --dry-run renders them', async () => {
    const r = await trace('--from=10.0.0.5', '--to=10.96.0.10:80', '-o', 'json');
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as Record<string, unknown>;
    expect(j).toMatchObject({
      verdict: 'DNAT',
      endpoints: ['10.244.1.11:8080', '10.244.1.12:8080', '10.244.2.21:8080'],
      masquerade: false,
      service: 'default/web:http',
      mode: 'faketrace',
      family: 'IPv4',
      source: '--dry-run output',
    });
    expect(j['path']).toEqual([
      { where: 'fake/prerouting', rule: 'SVC default/web:http TCP 10.96.0.10:80 -> 10.244.1.11:8080,10.244.1.12:8080,10.244.2.21:8080', service: 'default/web:http', note: 'on node-1' },
    ]);
    expect(typeof j['reason']).toBe('string');
  }, SLOW);

  it("a source among the Node object's addresses is the node's own (OUTPUT); --node-address replaces them", async () => {
    const own = JSON.parse((await trace('--from=192.168.49.2', '--to=10.96.0.10:80', '-ojson')).out) as { masquerade: boolean; path: { where: string }[] };
    expect(own.masquerade).toBe(true);
    expect(own.path[0]!.where).toBe('fake/output');
    const replaced = JSON.parse((await trace('--from=192.168.49.2', '--to=10.96.0.10:80', '--node-address=10.0.0.9', '-o=json')).out) as { path: { where: string }[] };
    expect(replaced.path[0]!.where).toBe('fake/prerouting');
  }, SLOW);

  it('text: the packet, the path step by step with the owning Service port, the verdict with probabilities, masquerade, reason', async () => {
    const r = await trace('--from=10.0.0.5:40000', '--to=10.96.0.10:80');
    expect(r.code).toBe(0);
    expect(r.out).toContain('Packet:     TCP 10.0.0.5:40000 -> 10.96.0.10:80, arriving from outside the node or from a pod (PREROUTING)');
    expect(r.out).toContain('Rules:      faketrace mode, IPv4, from --dry-run output');
    expect(r.out).toContain('  1.  fake/prerouting\n      SVC default/web:http TCP 10.96.0.10:80 -> ');
    expect(r.out).toContain('      service port: default/web:http');
    expect(r.out).toContain('Verdict:    DNAT to one of 3 endpoints\n  10.244.1.11:8080  33.3%');
    expect(r.out).toContain('Masquerade: no: ');
    expect(r.out).toMatch(/^Reason: {5}\S/m);
  }, SLOW);

  it("dual-stack: each family's block (tagged by family) is traced for a destination of that family", async () => {
    const dual = ['--cluster-cidr=10.244.0.0/16,fd00:10:244::/48', '-o', 'json'];
    const v6 = await trace('--from=fd00::5', '--to=[fd00:10:96::10]:80', ...dual);
    expect(v6.code).toBe(0);
    // The examples' Services are IPv4-only: the IPv6 rules hold nothing for it.
    expect(JSON.parse(v6.out)).toMatchObject({ verdict: 'ACCEPT', family: 'IPv6', service: null });
    const v4 = await trace('--from=10.0.0.5', '--to=10.96.0.10:80', ...dual);
    expect(JSON.parse(v4.out)).toMatchObject({ verdict: 'DNAT', family: 'IPv4', service: 'default/web:http' });
  }, SLOW);

  it('exit 0 whatever the verdict: REJECT (no endpoints) and ACCEPT (no Service rule)', async () => {
    const reject = await trace('--from=10.0.0.5', '--to=10.96.0.99:80', '-o', 'json');
    expect(reject.code).toBe(0);
    expect(JSON.parse(reject.out)).toMatchObject({ verdict: 'REJECT', endpoints: [], service: expect.stringMatching(/^default\/pending:/) });
    const accept = await trace('--from=10.0.0.5', '--to=10.96.0.77:80', '--protocol=udp', '-o', 'json');
    expect(accept.code).toBe(0);
    expect(JSON.parse(accept.out)).toMatchObject({ verdict: 'ACCEPT', endpoints: [], service: null, path: [] });
  }, SLOW);

  it.each([
    [['--from=10.0.0.5', '--to=10.96.0.10'], 'kube-proxy trace: malformed --to "10.96.0.10": want IP:PORT ([IPv6]:PORT) with a port in 1-65535'],
    [['--from=10.0.0', '--to=10.96.0.10:80'], 'kube-proxy trace: malformed --from "10.0.0": want IP or IP:PORT ([IPv6]:PORT)'],
    [['--to=10.96.0.10:80'], 'kube-proxy trace: --from=IP[:PORT] is required (the source address)'],
    [['--from=10.0.0.5', '--to=10.96.0.10:80', '--protocol=icmp'], 'kube-proxy trace: unknown protocol "icmp": want TCP, UDP or SCTP'],
    [['--from=fd00::5', '--to=[fd00::10]:80'], 'kube-proxy trace: the faketrace rules of this node are IPv4 only; nothing to trace a packet to IPv6 over'],
    [['--from=10.0.0.5', '--to=10.96.0.10:80', '--live'], 'kube-proxy trace: no faketrace rules found on this node for IPv4: looked for fake-rules-save IPv4 (the fake mode\'s rule dump)'],
    [['--from=10.0.0.5', '--to=10.96.0.10:80', '--proxy-mod=x'], 'kube-proxy trace: unknown flag: --proxy-mod (see --help)'],
  ])('bad input %j: one line on stderr, nothing on stdout, exit 1', async (argv, line) => {
    const r = await trace(...argv);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(line + '\n');
  }, SLOW);

  it('a mode without a tracer, or an unknown mode, is refused with exit 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-trace-'));
    try {
      const plugin = join(dir, 'untraced.mjs');
      await writeFile(plugin, `export const backend = { apiVersion: 'kube-proxy.backend/v1', name: 'untraced', version: '1.0.0', detect: () => ({ usable: true, reason: '' }), register() {} };`);
      let t = captureIO();
      expect(await runCli(['trace', `--backend-plugin=${plugin}`, '--proxy-mode=untraced', '--live', '--from=10.0.0.5', '--to=10.96.0.10:80'], t.streams)).toBe(1);
      expect(t.err()).toBe('kube-proxy trace: proxy mode "untraced" cannot trace packets (its backend has no tracer)\n');
      t = captureIO();
      expect(await runCli(['trace', '--proxy-mode=bpf', '--live', '--from=10.0.0.5', '--to=10.96.0.10:80'], t.streams)).toBe(1);
      expect(t.err()).toMatch(/^kube-proxy trace: unknown proxy mode "bpf"; registered modes: iptables, /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, SLOW);

  it('logs only warnings and errors unless -v is given', async () => {
    const quiet = await trace('--from=10.0.0.5', '--to=10.96.0.10:80', '-o', 'json');
    expect(quiet.err).toBe('');
    const loud = await trace('--from=10.0.0.5', '--to=10.96.0.10:80', '-o', 'json', '-v', '2');
    expect(loud.code).toBe(0);
    expect(loud.err).toContain('Loaded manifests');
    expect(JSON.parse(loud.out)).toMatchObject({ verdict: 'DNAT' });
  }, SLOW);

  it('--help lists the commands; trace --help and explain --help describe them', async () => {
    let t = captureIO();
    expect(await runCli(['--help'], t.streams)).toBe(0);
    expect(t.out()).toContain('  kube-proxy trace [flags] --from=IP[:PORT] --to=IP:PORT');
    expect(t.out()).toMatch(/^ {2}explain {3}/m);
    t = captureIO();
    expect(await runCli(['trace', '--help'], t.streams)).toBe(0);
    expect(t.out()).toContain('--node-address IP');
    t = captureIO();
    expect(await runCli(['explain', '-h'], t.streams)).toBe(0);
    expect(t.out()).toContain('kube-proxy explain [PROXY FLAGS] [--live] NAMESPACE/NAME [-o text|json]');
  }, SLOW);
});
