/**
 * The host packages the IPVS VM harness needs (QEMU, kmod's depmod, cpio, a static busybox for the
 * initramfs, and ipvsadm/ipset, which the guest runs from the host's own root). Installed with
 * apt-get only when missing; `apt-get update` runs once, and only if a package is not found.
 */
import { run } from '@kube-proxy/testing-netns';

/** apt (or the package manager's network) cannot work on this host: the harness cannot be set up. */
export class VmUnavailableError extends Error {
  override readonly name = 'VmUnavailableError';
}

export const HOST_PACKAGES = ['qemu-system-x86', 'kmod', 'cpio', 'busybox-static', 'ipvsadm', 'ipset'] as const;

async function installed(pkg: string): Promise<boolean> {
  const r = await run('dpkg-query', ['-W', '-f=${Status}', pkg], { allowFailure: true, timeoutMs: 15_000 }).catch((e: Error) => {
    throw new VmUnavailableError(`not a Debian host: ${e.message}`);
  });
  return r.code === 0 && r.stdout.includes('install ok installed');
}

/** Installs whatever of HOST_PACKAGES is missing; returns the packages it installed. */
export async function ensureHostPackages(): Promise<string[]> {
  if (process.getuid?.() !== 0) throw new VmUnavailableError('the IPVS VM harness needs root (apt-get, QEMU with the host root shared)');
  const missing: string[] = [];
  for (const p of HOST_PACKAGES) if (!(await installed(p))) missing.push(p);
  if (missing.length === 0) return [];
  const install = (): Promise<{ code: number | null; stderr: string }> =>
    run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], {
      allowFailure: true,
      timeoutMs: 600_000,
      env: { DEBIAN_FRONTEND: 'noninteractive' },
    });
  let r = await install().catch((e: Error) => {
    throw new VmUnavailableError(e.message);
  });
  if (r.code !== 0) {
    await run('apt-get', ['update'], { allowFailure: true, timeoutMs: 300_000, env: { DEBIAN_FRONTEND: 'noninteractive' } });
    r = await install();
  }
  if (r.code !== 0) throw new VmUnavailableError(`apt-get install ${missing.join(' ')} failed: ${r.stderr.trim().slice(0, 2000)}`);
  return missing;
}
