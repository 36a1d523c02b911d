/**
 * `prepare`: everything the host needs before a boot, cached outside the repo so a warm run costs
 * a few dpkg/apt-cache queries: the host packages, Debian's current kernel (downloaded, unpacked,
 * depmod'ed) and the initramfs. The cache dir is KUBE_PROXY_IPVS_VM_CACHE or
 * /var/cache/kube-proxy-ts-ipvs-vm; nothing downloaded is ever written into the repository.
 */
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { VmUnavailableError, ensureHostPackages } from './host-packages.js';
import { buildInitramfs } from './initramfs.js';
import { unpackKernel, type UnpackedKernel } from './kernel.js';
import { INIT_VERSION } from './init-script.js';

export const DEFAULT_CACHE_DIR = '/var/cache/kube-proxy-ts-ipvs-vm';

export interface VmImage {
  readonly kernel: UnpackedKernel;
  readonly initrd: string;
  /** Packages this call installed (empty when warm). */
  readonly installed: readonly string[];
  readonly durationMs: number;
}

export function cacheDir(): string {
  return process.env['KUBE_PROXY_IPVS_VM_CACHE'] ?? DEFAULT_CACHE_DIR;
}

export async function prepare(dir: string = cacheDir()): Promise<VmImage> {
  const started = Date.now();
  const installed = await ensureHostPackages();
  mkdirSync(dir, { recursive: true });
  const kernel = await unpackKernel(dir);
  const initrd = join(dir, kernel.version, `initrd-v${INIT_VERSION}.cpio`);
  if (!existsSync(initrd)) {
    const tmp = `${initrd}.tmp-${process.pid}`;
    await buildInitramfs(kernel, tmp);
    renameSync(tmp, initrd);
  }
  return { kernel, initrd, installed, durationMs: Date.now() - started };
}

/**
 * prepare(), or the reason it cannot work here (no root, no apt-get, no QEMU: VmUnavailableError's
 * message) for a suite or benchmark that skips loudly instead of failing. Any other error is thrown.
 */
export async function prepareOrReason(dir: string = cacheDir()): Promise<VmImage | string> {
  try {
    return await prepare(dir);
  } catch (e) {
    if (e instanceof VmUnavailableError) return e.message;
    throw e;
  }
}
