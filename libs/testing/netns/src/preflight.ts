import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { run } from './exec.js';
import { cleanupStaleRuns, runPrefix } from './topology.js';

export interface NetnsAvailability {
  /** True when real-kernel tests can run: root and a working `ip netns`. */
  readonly ok: boolean;
  /** Why not (for the loud skip message). */
  readonly reason?: string;
  /** Tools the tests need that are missing (a failure, not a reason to skip). */
  readonly missingTools: readonly string[];
}

const TOOLS = ['ip', 'sysctl', 'iptables-nft', 'iptables-legacy', 'iptables-nft-restore', 'iptables-legacy-restore', 'conntrack'];

/**
 * Checks whether namespace tests can run here: running as root, and `ip netns add/del` works (tried
 * with a throw-away namespace `kpchk<pid>-node`). Never touches the root namespace's configuration.
 */
export async function netnsAvailable(): Promise<NetnsAvailability> {
  const missingTools: string[] = [];
  for (const t of TOOLS) if (!onPath(t)) missingTools.push(t);
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return { ok: false, reason: `not running as root (uid ${process.getuid()})`, missingTools };
  }
  if (missingTools.includes('ip')) return { ok: false, reason: '`ip` (iproute2) is not installed', missingTools };
  await cleanupStaleRuns('kpchk').catch(() => undefined);
  const name = `${runPrefix('kpchk')}-node`;
  const add = await run('ip', ['netns', 'add', name], { allowFailure: true, timeoutMs: 10_000 }).catch((e: Error) => ({
    code: -1,
    stderr: e.message,
  }));
  if (add.code !== 0) return { ok: false, reason: `\`ip netns add\` failed: ${add.stderr.trim()}`, missingTools };
  await run('ip', ['netns', 'del', name], { allowFailure: true, timeoutMs: 10_000 });
  return { ok: true, missingTools };
}

/** Whether an executable `name` is on PATH (plus the sbin directories root normally has). */
export function onPath(name: string): boolean {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/sbin', '/sbin'];
  return dirs.some((d) => {
    if (!d) return false;
    try {
      accessSync(join(d, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
