/**
 * Polls until `check` returns a value other than undefined/false, or fails after `timeoutMs` with the
 * last value described: integration tests against a live server must be bounded, never sleep-and-hope.
 */
export async function waitUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const intervalMs = opts.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'condition'}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
