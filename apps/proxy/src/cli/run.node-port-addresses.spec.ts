import { runCli } from './run.js';
import { captureIO } from './testing/capture-io.js';
import { REPO_ROOT, runKubeProxy } from './testing/kube-proxy-bin.js';

// --nodeport-addresses keywords (upstream v1.37: primary, localhost, all, mixed with CIDRs) in every
// mode's dry run of examples/, whose Node is 192.168.49.2 (a dry-run node also has its loopback
// interface, 127.0.0.1 and ::1, as every node does), and the real binary refusing bad entries.
const EXAMPLES = `${REPO_ROOT}examples`;

async function dryRun(mode: string, nodePortAddresses: string): Promise<string[]> {
  const t = captureIO();
  const args = [`--proxy-mode=${mode}`, `--manifests=${EXAMPLES}`, '--hostname-override=node-1', `--nodeport-addresses=${nodePortAddresses}`, '--dry-run', '--once'];
  expect(await runCli(args, t.streams)).toBe(0);
  return t.out().split('\n');
}

const grep = (lines: readonly string[], re: RegExp): string[] => lines.filter((l) => re.test(l));

describe('--nodeport-addresses keywords, per mode (dry run of examples/)', () => {
  it('iptables: primary,localhost jumps on the node IP and 127.0.0.1 (localhost NodePorts); all on every local address', async () => {
    const mixed = grep(await dryRun('iptables', 'primary,localhost'), /-A KUBE-SERVICES .*-j KUBE-NODEPORTS$/);
    expect(mixed).toEqual([
      expect.stringMatching(/ -d 192\.168\.49\.2(\/32)? -j KUBE-NODEPORTS$/),
      expect.stringMatching(/ -d 127\.0\.0\.1(\/32)? -j KUBE-NODEPORTS$/),
    ]);
    const all = grep(await dryRun('iptables', 'all'), /-A KUBE-SERVICES .*-j KUBE-NODEPORTS$/);
    expect(all).toEqual([expect.stringContaining('-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS')]);
    // A keyword mixed with a CIDR that selects nothing on this node.
    const withCIDR = grep(await dryRun('iptables', '10.99.0.0/16,localhost'), /-A KUBE-SERVICES .*-j KUBE-NODEPORTS$/);
    expect(withCIDR).toEqual([expect.stringMatching(/ -d 127\.0\.0\.1(\/32)? -j KUBE-NODEPORTS$/)]);
  }, 120_000);

  it('nftables: primary,localhost puts only the node IP in nodeport-ips (loopback needs the localhost-NodePorts gate); all uses fib daddr type local', async () => {
    const mixed = await dryRun('nftables', 'primary,localhost');
    expect(mixed).toContain('add element ip kube-proxy nodeport-ips { 192.168.49.2 }');
    expect(grep(mixed, /127\.0\.0\.1/)).toEqual([]);
    const all = await dryRun('nftables', 'all');
    expect(grep(all, /nodeport-ips/)).toEqual([]);
    expect(all).toContainEqual(expect.stringMatching(/^add rule ip kube-proxy services fib daddr type local .*vmap @service-nodeports$/));
  }, 120_000);

  it('ipvs: NodePort virtual servers on the selected node IPs, never on loopback', async () => {
    const vs = (lines: readonly string[]) => grep(lines, /^-A -t \S+:30080 /);
    expect(vs(await dryRun('ipvs', 'primary,localhost'))).toEqual(['-A -t 192.168.49.2:30080 -s rr']);
    expect(vs(await dryRun('ipvs', 'all'))).toEqual(['-A -t 192.168.49.2:30080 -s rr']);
    expect(vs(await dryRun('ipvs', 'localhost'))).toEqual([]);
  }, 120_000);

  it('userspace: NodePort capture rules narrowed to the selection, one per address; all leaves them on every address', async () => {
    const web = (lines: readonly string[]) => grep(lines, /^-A KUBE-NODEPORT-CONTAINER .*--dport 30080 /);
    expect(web(await dryRun('userspace', 'primary,localhost'))).toEqual([
      expect.stringContaining('--dport 30080 -d 192.168.49.2/32 -j REDIRECT'),
      expect.stringContaining('--dport 30080 -d 127.0.0.1/32 -j REDIRECT'),
    ]);
    const all = web(await dryRun('userspace', 'all'));
    expect(all).toHaveLength(1);
    expect(all[0]).not.toContain(' -d ');
  }, 120_000);
});

describe('bin/kube-proxy refuses bad --nodeport-addresses entries, naming the field', () => {
  it.each([
    ['bogus', 'nodePortAddresses[0]: must be a valid CIDR or one of the keywords'],
    ['primary,Localhost', 'nodePortAddresses[1]: must be a valid CIDR or one of the keywords \'primary\', \'localhost\', \'all\' (keywords are lowercase: "localhost")'],
    ['localhost,10.0.0.0/8,localhost', 'nodePortAddresses[2]: Duplicate value: "localhost"'],
  ])('--nodeport-addresses=%s exits 1', async (value, line) => {
    const r = await runKubeProxy(['--proxy-mode=iptables', '--manifests=examples', '--hostname-override=node-1', `--nodeport-addresses=${value}`, '--dry-run', '--once']);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain(line);
  }, 90_000);
});
