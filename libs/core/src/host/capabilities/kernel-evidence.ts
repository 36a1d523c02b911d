import { gunzipSync } from 'node:zlib';
import type { HostFs } from '../host-fs.js';

/** Kernel config option state: built in, module, or explicitly not set. */
export type KconfigValue = 'y' | 'm' | 'n';

/**
 * What the node's files say about its kernel, gathered once. Each source may be missing (no module
 * support, /lib/modules not mounted into a container, no /proc/config.gz), and the verdicts built on
 * this say which sources they used.
 */
export interface KernelEvidence {
  readonly release: string;
  /** Loaded modules (/proc/modules), or undefined when the file does not exist. */
  readonly loadedModules?: ReadonlySet<string>;
  /** Modules built into the kernel (/lib/modules/<release>/modules.builtin). */
  readonly builtinModules?: ReadonlySet<string>;
  /** Modules installed and loadable (/lib/modules/<release>/modules.dep). */
  readonly installedModules?: ReadonlySet<string>;
  /** Where the kernel config came from, and its options (without the CONFIG_ prefix). */
  readonly kconfigSource?: string;
  readonly kconfig?: ReadonlyMap<string, KconfigValue>;
  readonly procNetIpVs: boolean;
}

export async function gatherKernelEvidence(fs: HostFs): Promise<KernelEvidence> {
  const release = fs.kernelRelease();
  const modulesDir = `/lib/modules/${release}`;
  const [procModules, builtin, dep, procNetIpVs, kconfig] = await Promise.all([
    fs.readFile('/proc/modules'),
    fs.readFile(`${modulesDir}/modules.builtin`),
    fs.readFile(`${modulesDir}/modules.dep`),
    fs.exists('/proc/net/ip_vs'),
    readKconfig(fs, release),
  ]);
  return {
    release,
    procNetIpVs,
    ...(procModules ? { loadedModules: new Set(parseProcModules(procModules.toString())) } : {}),
    ...(builtin ? { builtinModules: new Set(parseModuleList(builtin.toString())) } : {}),
    ...(dep ? { installedModules: new Set(parseModuleList(dep.toString())) } : {}),
    ...(kconfig ?? {}),
  };
}

async function readKconfig(fs: HostFs, release: string): Promise<{ kconfigSource: string; kconfig: Map<string, KconfigValue> } | undefined> {
  const gz = await fs.readFile('/proc/config.gz');
  if (gz) {
    try {
      return { kconfigSource: '/proc/config.gz', kconfig: parseKconfig(gunzipSync(gz).toString()) };
    } catch {
      // unreadable: fall through to /boot
    }
  }
  const boot = `/boot/config-${release}`;
  const plain = await fs.readFile(boot);
  return plain ? { kconfigSource: boot, kconfig: parseKconfig(plain.toString()) } : undefined;
}

/** `CONFIG_IP_VS=m` → IP_VS: m; `# CONFIG_IP_VS is not set` → IP_VS: n. String/number options are skipped. */
export function parseKconfig(text: string): Map<string, KconfigValue> {
  const out = new Map<string, KconfigValue>();
  for (const line of text.split('\n')) {
    const set = /^CONFIG_([A-Za-z0-9_]+)=([ym])\s*$/.exec(line);
    if (set) out.set(set[1], set[2] as KconfigValue);
    const unset = /^# CONFIG_([A-Za-z0-9_]+) is not set/.exec(line);
    if (unset) out.set(unset[1], 'n');
  }
  return out;
}

/** First column of /proc/modules. */
export function parseProcModules(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.split(/\s+/)[0] ?? '')
    .filter((n) => n !== '');
}

/** modules.builtin / modules.dep paths ("kernel/net/netfilter/ipvs/ip_vs.ko.xz: …") → module names. */
export function parseModuleList(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.split(':')[0].trim())
    .filter((p) => p !== '')
    .map((p) => p.slice(p.lastIndexOf('/') + 1).replace(/\.ko(\.(xz|gz|zst))?$/, '').replaceAll('-', '_'));
}
