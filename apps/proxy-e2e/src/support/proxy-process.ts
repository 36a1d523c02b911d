/**
 * The proxy's own process behind the harness watchdog: `startProxy` returns the watchdog, whose only
 * child is `ip netns exec … bin/kube-proxy`, which execs into the proxy's Node process. The fault suite
 * kills that process with SIGKILL (no shutdown path runs, as when the OOM killer or a node crash hits
 * it); the soak reads its resident memory.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { RunningProxy } from './proxy.js';

function statusField(pid: number, field: string): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s*(.+)$`, 'm').exec(text);
    return m?.[1]?.trim();
  } catch {
    return undefined;
  }
}

/** The pid of the proxy process itself (the watchdog's child that runs bin/kube-proxy); throws if none. */
export function proxyPid(proxy: RunningProxy): number {
  const watchdog = proxy.child.pid;
  if (watchdog === undefined) throw new Error('the proxy watchdog has no pid');
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (statusField(pid, 'PPid') !== String(watchdog)) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmdline.includes('kube-proxy')) return pid;
  }
  throw new Error(`no kube-proxy process under watchdog ${watchdog}`);
}

/** Resident set size of `pid` in KiB (VmRSS of /proc/PID/status); undefined once it is gone. */
export function rssKiB(pid: number): number | undefined {
  const v = statusField(pid, 'VmRSS');
  const m = v ? /^(\d+)\s*kB$/.exec(v) : null;
  return m ? Number(m[1]) : undefined;
}

/** SIGKILLs the proxy process (not the watchdog) and waits, bounded, for the watchdog to report its exit. */
export async function killProxy9(proxy: RunningProxy, timeoutMs = 5000): Promise<{ pid: number; code: number | null }> {
  const pid = proxyPid(proxy);
  process.kill(pid, 'SIGKILL');
  const deadline = Date.now() + timeoutMs;
  while (!proxy.exited() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  if (!proxy.exited()) throw new Error(`the proxy (pid ${pid}) did not exit within ${timeoutMs} ms of SIGKILL`);
  return { pid, code: proxy.exitCode() };
}
