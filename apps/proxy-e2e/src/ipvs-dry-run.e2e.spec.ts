/**
 * `bin/kube-proxy --proxy-mode=ipvs --dry-run --once` on a dual-stack node (issue 20, defects 4–6).
 * No root and no namespace: a dry run changes nothing on the host (IPVS, ipsets and kube-ipvs0 live
 * in the proxy's in-memory kernel). On src/fixtures/dual-stack (two addresses of each family):
 * - exit 0 well under the 30 s sync period (a failed first sync of one family was retried only
 *   then), with no error line but the IPVS deprecation notice;
 * - one `# sync 1` block per family, each with its VIPs on kube-ipvs0 and a TCP and an SCTP
 *   NodePort virtual server on every node address of its family, the SCTP ones also as
 *   `nodeIP,sctp:port` entries of the family's KUBE-NODE-PORT-SCTP-HASH set.
 * Then the same services on a Node full of odd addresses (one IPv4-mapped, which is IPv4; link-local,
 * loopback, unspecified, duplicates, not an IP: none usable), and a Service whose external IPs and endpoints the
 * kernel refuses where IPVS mode puts them: each finishes the same way, serving what it can.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KUBE_PROXY_BIN, REPO_ROOT } from './support/proxy.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/dual-stack', import.meta.url));
/** Hard bound of one run; the defect made `--once` take the 30 s IPVS sync period. */
const RUN_TIMEOUT_MS = 20_000;

interface DryRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly elapsedMs: number;
}

function dryRunOnce(manifests: string): Promise<DryRun> {
  const args = ['--proxy-mode=ipvs', `--manifests=${manifests}`, '--hostname-override=node-1', '--dry-run', '--once'];
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(KUBE_PROXY_BIN, args, { cwd: REPO_ROOT, timeout: RUN_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      resolve({ code, stdout, stderr, elapsedMs: Date.now() - started });
    });
  });
}

/** The `# sync N … FAMILY` block of one family (up to the next `# sync` header). */
function familyBlock(stdout: string, family: 'IPv4' | 'IPv6'): string {
  const m = new RegExp(`^# sync 1 full \\S+ ${family}\\n([\\s\\S]*?)(?=^# sync |(?![\\s\\S]))`, 'm').exec(stdout);
  if (m === null) throw new Error(`no "# sync 1 … ${family}" block in:\n${stdout.slice(0, 2000)}`);
  return m[1] as string;
}

/** klog error lines (`E…`) other than upstream's IPVS deprecation notice, which every IPVS run logs. */
function unexpectedErrors(stderr: string): string[] {
  return stderr.split('\n').filter((l) => /^E\d{4} /.test(l) && !/ipvs proxier is now deprecated/.test(l));
}

function expectFinished(run: DryRun): void {
  if (run.code !== 0) throw new Error(`exit ${run.code} after ${run.elapsedMs} ms; stderr:\n${run.stderr.slice(-3000)}`);
  expect(run.elapsedMs).toBeLessThan(RUN_TIMEOUT_MS);
  expect(unexpectedErrors(run.stderr)).toEqual([]);
  expect(run.stderr).not.toMatch(/Failed to sync|Sync failed|RTNETLINK/);
  expect(run.stdout.match(/^# sync /gm)).toHaveLength(2);
}

function nodePortServers(block: string): string[] {
  return block.split('\n').filter((l) => /^-A (-t|--sctp-service) \S+:3009[01] /.test(l)).sort();
}

describe('bin/kube-proxy --proxy-mode=ipvs --dry-run --once, dual-stack', () => {
  it('finishes at once with both families printed and node ports on every node address of each family', async () => {
    const run = await dryRunOnce(FIXTURE);
    expectFinished(run);
    const v4 = familyBlock(run.stdout, 'IPv4');
    const v6 = familyBlock(run.stdout, 'IPv6');
    expect(nodePortServers(v4)).toEqual([
      '-A --sctp-service 192.168.49.2:30091 -s rr',
      '-A --sctp-service 192.168.50.2:30091 -s rr',
      '-A -t 192.168.49.2:30090 -s rr',
      '-A -t 192.168.50.2:30090 -s rr',
    ]);
    expect(nodePortServers(v6)).toEqual([
      '-A --sctp-service [fd00:49::2]:30091 -s rr',
      '-A --sctp-service [fd00:50::2]:30091 -s rr',
      '-A -t [fd00:49::2]:30090 -s rr',
      '-A -t [fd00:50::2]:30090 -s rr',
    ]);
    expect(v4).toMatch(/^add KUBE-NODE-PORT-SCTP-HASH 192\.168\.49\.2,sctp:30091$/m);
    expect(v4).toMatch(/^add KUBE-NODE-PORT-SCTP-HASH 192\.168\.50\.2,sctp:30091$/m);
    expect(v6).toMatch(/^add KUBE-6-NODE-PORT-SCTP-HASH fd00:49::2,sctp:30091$/m);
    expect(v6).toMatch(/^add KUBE-6-NODE-PORT-SCTP-HASH fd00:50::2,sctp:30091$/m);
    // One kube-ipvs0 holds both families' VIPs.
    expect(v4).toMatch(/^# kube-ipvs0\n10\.96\.0\.30\/32\n10\.96\.0\.31\/32\n/m);
    expect(v6).toMatch(/^# kube-ipvs0\nfd00:96::30\/128\nfd00:96::31\/128\n/m);
  });

  it('a Node with odd addresses (mapped, link-local, loopback, unspecified, duplicates) finishes too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kp-ipvs-odd-'));
    try {
      copyFileSync(join(FIXTURE, 'services.yaml'), join(dir, 'services.yaml'));
      const odd = ['::ffff:8.8.8.8', 'fe80::1', '127.0.0.1', '::1', '0.0.0.0', '::', '192.168.49.2', '192.168.49.2', 'FD00:49::2', 'fd00:49::2', 'not-an-ip'];
      writeFileSync(
        join(dir, 'node.json'),
        JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, status: { addresses: odd.map((address) => ({ type: 'InternalIP', address })) } }),
      );
      const run = await dryRunOnce(dir);
      expectFinished(run);
      // ::ffff:8.8.8.8 is the IPv4 address 8.8.8.8 (as Go reads a Node's addresses), and the first IPv4 one.
      expect(nodePortServers(familyBlock(run.stdout, 'IPv4'))).toEqual([
        '-A --sctp-service 192.168.49.2:30091 -s rr',
        '-A --sctp-service 8.8.8.8:30091 -s rr',
        '-A -t 192.168.49.2:30090 -s rr',
        '-A -t 8.8.8.8:30090 -s rr',
      ]);
      expect(nodePortServers(familyBlock(run.stdout, 'IPv6'))).toEqual(['-A --sctp-service [fd00:49::2]:30091 -s rr', '-A -t [fd00:49::2]:30090 -s rr']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Services with addresses the kernel refuses (::, ::1, 0.0.0.0, ff02::1, endpoint 0.0.0.0) finish too, the rest served', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kp-ipvs-refused-'));
    try {
      for (const f of ['node.yaml', 'services.yaml']) copyFileSync(join(FIXTURE, f), join(dir, f));
      const svc = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'odd', namespace: 'default' },
        spec: { clusterIP: '10.96.0.50', clusterIPs: ['10.96.0.50', 'fd00:96::50'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack', externalIPs: ['::', '::1', '0.0.0.0', 'ff02::1'], ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
      };
      const slice = (family: string, addresses: string[]) => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `odd-${family.toLowerCase()}`, namespace: 'default', labels: { 'kubernetes.io/service-name': 'odd' } },
        addressType: family,
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
      });
      writeFileSync(join(dir, 'odd.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [svc, slice('IPv4', ['0.0.0.0', '10.244.1.50']), slice('IPv6', ['fd00:244:1::50'])] }));
      const run = await dryRunOnce(dir);
      expectFinished(run);
      expect(run.stderr).toMatch(/^W.* Left out addresses the kernel refuses in IPVS mode/m);
      const v4 = familyBlock(run.stdout, 'IPv4');
      const v6 = familyBlock(run.stdout, 'IPv6');
      expect(v4).toMatch(/^-A -t 10\.96\.0\.50:80 -s rr\n-a -t 10\.96\.0\.50:80 -r 10\.244\.1\.50:8080 -m -w 1\n-A /m);
      expect(v4).not.toMatch(/0\.0\.0\.0:/);
      expect(v6).toMatch(/^-A -t \[::1\]:80 -s rr$/m);
      expect(v6).toMatch(/^-A -t \[ff02::1\]:80 -s rr$/m);
      expect(v6).not.toMatch(/\[::\]:80/);
      expect(v6).toMatch(/^# kube-ipvs0\nfd00:96::30\/128\nfd00:96::31\/128\nfd00:96::50\/128\n# iptables/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
