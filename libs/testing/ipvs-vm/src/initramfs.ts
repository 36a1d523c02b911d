/**
 * Builds the guest's initramfs (an uncompressed newc cpio, which the kernel unpacks as is): the
 * host's static busybox, the boot modules copied from the unpacked kernel, the generated /init and
 * the /sbin/modprobe shim. Built in a temp dir under the cache and removed by exact path.
 */
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOT_MODULES, MODPROBE_SHIM, initScript } from './init-script.js';
import type { UnpackedKernel } from './kernel.js';
import { spawnChecked } from './spawn-bounded.js';

export const STATIC_BUSYBOX = '/bin/busybox';

/** `name` → path of its .ko, from the kernel's modules.dep. */
export function modulePaths(modulesDir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(join(modulesDir, 'modules.dep'), 'utf8').split('\n')) {
    const rel = line.split(':')[0];
    if (!rel.endsWith('.ko')) continue;
    out.set(rel.slice(rel.lastIndexOf('/') + 1, -'.ko'.length), join(modulesDir, rel));
  }
  return out;
}

/** Writes `<outFile>`: the initramfs (the same for every job: /init reads the steps from the share). */
export async function buildInitramfs(kernel: UnpackedKernel, outFile: string): Promise<void> {
  const dir = `${outFile}.d`;
  rmSync(dir, { recursive: true, force: true });
  try {
    for (const d of ['bin', 'sbin', 'modules', 'proc', 'sys', 'dev', 'mnt']) mkdirSync(join(dir, d), { recursive: true });
    copyFileSync(STATIC_BUSYBOX, join(dir, 'bin', 'busybox'));
    chmodSync(join(dir, 'bin', 'busybox'), 0o755);
    const paths = modulePaths(kernel.modulesDir);
    const files = ['init', 'bin', 'bin/busybox', 'sbin', 'sbin/modprobe', 'modules', 'proc', 'sys', 'dev', 'mnt'];
    for (const m of BOOT_MODULES) {
      const p = paths.get(m);
      if (p === undefined) throw new Error(`module ${m} not in ${kernel.modulesDir}/modules.dep`);
      copyFileSync(p, join(dir, 'modules', `${m}.ko`));
      files.push(`modules/${m}.ko`);
    }
    writeFileSync(join(dir, 'init'), initScript(kernel.modulesDir), { mode: 0o755 });
    writeFileSync(join(dir, 'sbin', 'modprobe'), MODPROBE_SHIM, { mode: 0o755 });
    await spawnChecked('cpio', ['--quiet', '-o', '-H', 'newc'], { cwd: dir, input: files.join('\n') + '\n', stdoutFile: outFile, timeoutMs: 60_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
