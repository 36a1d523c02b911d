/*
 * `explain --live` found the kernel disagreeing with the objects: the usual cause is a proxy that has
 * not synced since the objects changed (stopped, crash-looping, or failing its syncs). The proxy on
 * this node says when it last synced on its metrics address; ask it, briefly, and say what it answered.
 */

const METRIC = 'kubeproxy_sync_proxy_rules_last_timestamp_seconds';
const TIMEOUT_MS = 1000;

/** The newest last-sync time in a Prometheus text exposition, in seconds since the epoch. */
export function lastSyncSeconds(exposition: string): number | undefined {
  let newest: number | undefined;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(METRIC)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value) && value > 0 && (newest === undefined || value > newest)) newest = value;
  }
  return newest;
}

/** The metrics URL of a bind address (`127.0.0.1:10249`, `[::1]:10249`, `0.0.0.0:10249` → loopback). */
export function metricsURL(bindAddress: string): string {
  const host = bindAddress.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '[::1]:');
  return `http://${host}/metrics`;
}

/** One sentence on when this node's proxy last synced, for the differences of `explain --live`. */
export async function lastSyncNote(bindAddress: string, now: Date = new Date()): Promise<string> {
  const url = metricsURL(bindAddress);
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    const seconds = response.ok ? lastSyncSeconds(await response.text()) : undefined;
    if (seconds === undefined) return `the proxy at ${url} reports no successful sync yet (${METRIC})`;
    const ago = Math.max(0, Math.round(now.getTime() / 1000 - seconds));
    return `the proxy has not synced since ${new Date(seconds * 1000).toISOString()} (${ago} s ago, ${METRIC} at ${url})`;
  } catch {
    return `no proxy answered at ${url}: the rules may be left by a proxy that is not running`;
  }
}
