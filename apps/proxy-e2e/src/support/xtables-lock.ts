/**
 * Another process holding the xtables lock, as a second iptables user (a CNI plugin, a firewall
 * reload) does. iptables-legacy serialises on flock(2) of `XTABLES_LOCKFILE` (default
 * /run/xtables.lock; the suites point it at a per-run file); `-w N` waits up to N seconds for it and
 * then fails with exit 4 ("Another app is currently holding the xtables lock"). util-linux `flock`
 * takes the same flock(2) lock. iptables-nft does not use the lock at all.
 *
 * The holder is `flock -o -x FILE sleep MAX` (the lock stays with flock itself, not the sleep) in its
 * own process group, so release() frees it at once and the sleep bounds it if everything else fails.
 */
import { idle, waitFor, type SimulatedNode } from '@kube-proxy/testing-netns';

export interface XtablesLockHolder {
  /** When the lock was seen held (epoch ms). */
  readonly heldSince: number;
  /** Ends the holder and waits (bounded) until the lock is free again; returns when it was. */
  release(): Promise<number>;
}

/** Whether `lockFile` is free right now (a non-blocking flock of our own succeeds). */
async function lockFree(node: SimulatedNode, ns: string, lockFile: string): Promise<boolean> {
  const r = await node.exec(ns, 'flock', ['-n', '-x', lockFile, 'true'], { allowFailure: true, timeoutMs: 5000 });
  return r.code === 0;
}

/** Takes the lock from a separate process in `ns` for at most `maxHoldS` seconds; resolves once it is held. */
export async function holdXtablesLock(node: SimulatedNode, ns: string, lockFile: string, maxHoldS: number): Promise<XtablesLockHolder> {
  const child = node.spawn(ns, 'flock', ['-o', '-x', lockFile, 'sleep', String(maxHoldS)], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await waitFor(
    `another process to hold ${lockFile}`,
    async () => {
      if (child.exitCode !== null) throw new Error(`flock exited ${child.exitCode}: ${stderr}`);
      return (await lockFree(node, ns, lockFile)) ? undefined : true;
    },
    { timeoutMs: 5000, intervalMs: 50 },
  );
  const heldSince = Date.now();
  return {
    heldSince,
    release: async () => {
      const pid = child.pid;
      if (pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-pid, 'SIGKILL'); // its own process group: flock and its sleep
        } catch {
          /* gone */
        }
      }
      await Promise.race([exited, idle(3000)]);
      await waitFor(`${lockFile} to be free`, async () => ((await lockFree(node, ns, lockFile)) ? true : undefined), {
        timeoutMs: 5000,
        intervalMs: 50,
      });
      return Date.now();
    },
  };
}
