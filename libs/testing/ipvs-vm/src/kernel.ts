/**
 * Debian's generic kernel, unpacked but not installed: the harness boots it under QEMU because the
 * host kernel has no IPVS. `linux-image-amd64` names the current `linux-image-<version>` package
 * (not `-cloud-amd64`: that flavour lacks 9p); it is downloaded once into the cache dir, extracted
 * with `dpkg-deb -x` and indexed with `depmod -b`, and reused from there on later runs.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '@kube-proxy/testing-netns';
import { VmUnavailableError } from './host-packages.js';
import { spawnBounded } from './spawn-bounded.js';

export interface UnpackedKernel {
  /** e.g. `6.1.0-57-amd64`. */
  readonly version: string;
  /** The extracted package root (holds `boot/` and `lib/modules/<version>`). */
  readonly root: string;
  readonly vmlinuz: string;
  readonly modulesDir: string;
}

/** `linux-image-6.1.0-57-amd64` from `apt-cache depends linux-image-amd64`. */
export async function resolveKernelPackage(): Promise<string> {
  const r = await run('apt-cache', ['depends', 'linux-image-amd64'], { allowFailure: true, timeoutMs: 30_000 }).catch((e: Error) => {
    throw new VmUnavailableError(e.message);
  });
  const m = /Depends:\s*(linux-image-(\d[^\s]*-amd64))\s*$/m.exec(r.stdout);
  if (m === null) throw new VmUnavailableError(`cannot find the kernel package in: ${r.stdout.trim()}`);
  return m[1];
}

async function downloadedDeb(cacheDir: string, pkg: string): Promise<string> {
  const find = (): string | undefined => readdirSync(cacheDir).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
  let deb = find();
  if (deb === undefined) {
    let r = await spawnBounded('apt-get', ['download', pkg], { cwd: cacheDir, timeoutMs: 600_000 });
    if (r.code !== 0) {
      await run('apt-get', ['update'], { allowFailure: true, timeoutMs: 300_000 });
      r = await spawnBounded('apt-get', ['download', pkg], { cwd: cacheDir, timeoutMs: 600_000 });
    }
    if (r.code !== 0) throw new VmUnavailableError(`apt-get download ${pkg} failed: ${r.stderr.trim().slice(0, 2000)}`);
    deb = find();
    if (deb === undefined) throw new Error(`apt-get download ${pkg} left no .deb in ${cacheDir}`);
  }
  return join(cacheDir, deb);
}

/** Downloads (once), extracts (once) and depmods Debian's current kernel under `cacheDir`. */
export async function unpackKernel(cacheDir: string): Promise<UnpackedKernel> {
  const pkg = await resolveKernelPackage();
  const version = pkg.slice('linux-image-'.length);
  const root = join(cacheDir, version, 'root');
  const ready = join(cacheDir, version, 'root.ready');
  if (!existsSync(ready)) {
    const deb = await downloadedDeb(cacheDir, pkg);
    const tmp = join(cacheDir, version, `root.tmp-${process.pid}`);
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(join(cacheDir, version), { recursive: true });
    await run('dpkg-deb', ['-x', deb, tmp], { timeoutMs: 300_000 });
    await run('depmod', ['-b', tmp, version], { timeoutMs: 300_000 });
    rmSync(root, { recursive: true, force: true });
    renameSync(tmp, root);
    writeFileSync(ready, `${pkg}\n`);
  }
  return { version, root, vmlinuz: join(root, 'boot', `vmlinuz-${version}`), modulesDir: join(root, 'lib', 'modules', version) };
}
