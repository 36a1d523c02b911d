/**
 * kube-ipvs0 is one link per network namespace, shared by both families' proxiers (and by any other
 * IPVS proxy on the node): each may read it back as missing and put `link add` at the head of its
 * `ip -batch`. The second to run gets EEXIST on that first line and `ip` stops there. The link then
 * exists, which is all that line wanted (upstream's EnsureDummyDevice treats an existing device as
 * success), so the rest of the batch is run again without it. Shared by the host kernel and the
 * in-memory kernel of --dry-run, so both behave as one node does.
 */
import type { LinkChange } from './link-batch.js';

/** `ip -batch` failed on its first line (our `link add`) because the link exists. */
export function isLinkAddRace(err: unknown): boolean {
  const text = err instanceof Error ? err.message : String(err);
  return /File exists/.test(text) && /Command failed -:1\b/.test(text);
}

/**
 * Runs `change` through `runBatch` (one `ip -batch -` process); when it created the link and lost
 * the race for it, runs the binds and unbinds once more without the `link add`.
 */
export async function applyLinkChangesSharingLink(change: LinkChange, runBatch: (change: LinkChange) => Promise<void>): Promise<void> {
  try {
    await runBatch(change);
  } catch (err) {
    if (!change.createLink || !isLinkAddRace(err)) throw err;
    await runBatch({ ...change, createLink: false });
  }
}
