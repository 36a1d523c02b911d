/**
 * Smoke test of the image deploy/image/build-oci.sh assembles without a container engine: the OCI
 * archive's descriptors are verified, its one layer is unpacked into a temporary root filesystem,
 * and kube-proxy runs there as a container runtime would start it — its own mount, UTS, IPC, PID and
 * network namespaces (the network one keeps even the read-only `nft --check` probe off the host),
 * a fresh /proc, the usual /dev nodes, the image config's PATH and nothing else of our environment.
 *
 * The build takes minutes (mmdebstrap downloads Debian), so it is not part of every run: without the
 * archive the suite skips loudly unless KUBE_PROXY_IMAGE_BUILD=1 asks it to build one first.
 * Root-only (chroot, mknod, unshare).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { verifyOciLayout, type OciImage } from '@kube-proxy/deploy-image';
import { REPO_ROOT } from './support/proxy.js';

const BUILD_SCRIPT = join(REPO_ROOT, 'deploy', 'image', 'build-oci.sh');
const ARCHIVE = join(REPO_ROOT, 'dist', 'image', 'kube-proxy-ts-oci.tar');
const BUILD = process.env['KUBE_PROXY_IMAGE_BUILD'] === '1';
const BUILD_TIMEOUT_MS = 600_000;
const RUN_TIMEOUT_MS = 30_000;
/** What a runtime puts in /dev: name, major, minor. */
const DEV_NODES = [
  ['null', 1, 3],
  ['zero', 1, 5],
  ['full', 1, 7],
  ['random', 1, 8],
  ['urandom', 1, 9],
  ['tty', 5, 0],
] as const;
/** The tools the proxy probes at startup (capabilities/detect.ts); all must be in the image. */
const PROBED_TOOLS = ['iptables', 'ip6tables', 'ipset', 'ipvsadm', 'nft', 'conntrack'];

function skipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (chroot, mknod and unshare need it)';
  if (!existsSync(ARCHIVE) && !BUILD) {
    return (
      `no image at ${ARCHIVE}; build it with \`deploy/image/build-oci.sh\` (~3 min, needs mmdebstrap), ` +
      'or run this suite with KUBE_PROXY_IMAGE_BUILD=1 to build it first'
    );
  }
  return undefined;
}

const skip = skipReason();
if (skip) {
  const bar = '!'.repeat(100);
  console.warn(`\n${bar}\n!!! SKIPPING image smoke test: ${skip}.\n${bar}\n`);
}
const describeImage = skip ? describe.skip : describe;

function run(command: string, args: readonly string[], timeoutMs: number, env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: timeoutMs, env, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`${command} ${args.join(' ')}: ${r.error.message}`);
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function mustRun(command: string, args: readonly string[], timeoutMs = RUN_TIMEOUT_MS): string {
  const r = run(command, args, timeoutMs);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.code ?? r.signal}:\n${r.stderr}`);
  return r.stdout;
}

describeImage('the engine-less OCI image (deploy/image/build-oci.sh) in a chroot', () => {
  let tmp = '';
  let rootfs = '';
  let image: OciImage | undefined;
  const img = (): OciImage => image ?? (() => { throw new Error('the image was not unpacked (see the beforeAll error)'); })();

  /** Runs a command inside the unpacked image with fresh namespaces and the image's environment. */
  function inImage(args: readonly string[]) {
    const env: NodeJS.ProcessEnv = {};
    for (const kv of img().config.config?.Env ?? []) {
      const eq = kv.indexOf('=');
      env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    const unshare = ['--mount', '--uts', '--ipc', '--pid', '--net', '--fork', `--mount-proc=${join(rootfs, 'proc')}`];
    // unshare and chroot themselves are found on the host's PATH; the image's PATH applies inside.
    return run('/usr/bin/env', ['-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'unshare', ...unshare, 'chroot', rootfs, ...args], RUN_TIMEOUT_MS, {
      PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    });
  }

  beforeAll(async () => {
    if (BUILD) {
      const r = run(BUILD_SCRIPT, [], BUILD_TIMEOUT_MS, { ...process.env, KUBE_PROXY_IMAGE_SKIP_BUILD: '1' });
      if (r.code !== 0) throw new Error(`build-oci.sh exited ${r.code ?? r.signal}:\n${r.stderr.slice(-4000)}`);
    }
    console.info(`image smoke test: ${ARCHIVE} (${(statSync(ARCHIVE).size / 1e6).toFixed(0)} MB, built ${statSync(ARCHIVE).mtime.toISOString()})`);
    tmp = mkdtempSync('/tmp/kpts-image-smoke-');
    const layout = join(tmp, 'layout');
    rootfs = join(tmp, 'rootfs');
    mkdirSync(layout);
    mkdirSync(rootfs);
    mustRun('tar', ['-xf', ARCHIVE, '-C', layout]);
    image = await verifyOciLayout(layout);
    for (const layer of image.layerPaths) mustRun('tar', ['-xzf', layer, '-C', rootfs, '--numeric-owner']);
    for (const [name, major, minor] of DEV_NODES) {
      mustRun('mknod', ['-m', '666', join(rootfs, 'dev', name), 'c', String(major), String(minor)]);
    }
    cpSync(join(REPO_ROOT, 'examples'), join(rootfs, 'examples'), {
      recursive: true,
      filter: (src) => !src.split('/').includes('node_modules'),
    });
  }, BUILD_TIMEOUT_MS + 60_000);

  afterAll(() => {
    if (!tmp) return;
    // --mount-proc's proc lives in the namespace and goes with it; never delete through a live mount.
    if (readFileSync('/proc/self/mountinfo', 'utf8').includes(tmp)) {
      console.warn(`image smoke test: ${tmp} still has a mount; left in place`);
      return;
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  it('is an OCI image whose entrypoint is kube-proxy, exec form', () => {
    expect(img().config.config?.Entrypoint).toEqual(['/usr/local/bin/kube-proxy']);
    expect(img().config.os).toBe('linux');
  });

  it('prints its version from inside the image', () => {
    const r = inImage(['/usr/local/bin/kube-proxy', '--version']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^kube-proxy-ts v\d+\.\d+\.\d+ \(kube-proxy v1\.\d+ compatible, node v20\.\d+\.\d+\)\n$/);
  });

  it('renders the examples as nftables rules in a --dry-run --once, finding every tool it probes', () => {
    const r = inImage(['/usr/local/bin/kube-proxy', '--proxy-mode=nftables', '--manifests=/examples', '--dry-run', '--once', '-v=5']);
    if (r.code !== 0) throw new Error(`kube-proxy exited ${r.code ?? r.signal}:\n${r.stderr.slice(-4000)}`);
    expect(r.stdout).toContain('add table ip kube-proxy');
    // default/web from examples/web.yaml: ClusterIP 10.96.0.10, port 80.
    expect(r.stdout).toMatch(/add element ip kube-proxy service-ips \{ 10\.96\.0\.10 \. tcp \. 80 : goto service-\S+-default\/web\/tcp\/http \}/);
    const missing = PROBED_TOOLS.filter((t) => !new RegExp(`Probed tool tool="${t}" present=true`).test(r.stderr));
    expect(missing).toEqual([]);
    expect(r.stderr).toMatch(/nftables available/);
  });

  it('has iproute2 for the backends that manage links and addresses', () => {
    const r = inImage(['ip', '-V']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/iproute2-/);
  });
});
