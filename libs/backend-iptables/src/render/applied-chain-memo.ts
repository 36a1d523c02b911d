/**
 * AppliedChainMemo: what the last successful iptables-restore left in kube-proxy's top-level chains
 * (every filter chain, and KUBE-SERVICES / KUBE-NODEPORTS / KUBE-POSTROUTING / KUBE-MARK-MASQ in
 * nat), so that a partial sync can leave out the ones whose content would not change.
 *
 * Why: upstream's partial sync (KEP-3453) skips unchanged services' chains but rewrites the whole
 * filter table and the top-level nat chains every time. Those hold one or more rules per service,
 * so at 10,000 services a one-endpoint change still sends ~1.4 MB to iptables-restore. Under
 * --noflush a chain the payload does not mention is left as it is, so omitting a chain whose
 * rendered rules are byte-identical to what the kernel holds yields the same kernel state.
 *
 * That is only true while the memo never gets ahead of the kernel. Hence:
 * - the renderer only *reads* the memo; what it wrote is returned as an AppliedChainUpdate, and the
 *   caller commits it only after iptables-restore succeeded;
 * - the caller clears the memo after a failed restore (with iptables-restore each table commits on
 *   its own, so the kernel may hold any mix of old and new) and whenever it has to assume the
 *   kernel changed under it (canary flush, any full-sync request, stop);
 * - clear() bumps an epoch, and an update rendered before a clear() is refused, so a sync that was
 *   in flight while the tables were flushed cannot re-fill the memo;
 * - a full sync rewrites every chain anyway and refreshes every entry.
 *
 * Memory: at most one Buffer per top-level chain (ten keys), holding that chain's rule lines
 * exactly as written. Unchanged content is not copied; changed content is copied in place when it
 * fits, and the Buffer is replaced (with 1/8 headroom, or shrunk when mostly unused) only when it
 * does not. clear() only marks entries invalid, so the full sync that follows refills the same
 * Buffers. At 10,000 services × 5 endpoints that is ~1.4 MB, nearly all nat KUBE-SERVICES.
 */
import type { LineBuffer, RenderBuffers } from './line-buffer.js';

interface MemoEntry {
  /** Capacity ≥ length; only [0, length) is content. */
  buf: Buffer;
  length: number;
  /** False after clear(): the Buffer is kept for reuse, its content means nothing. */
  valid: boolean;
}

/** Key of a chain in the memo: "table/chain" (e.g. "nat/KUBE-SERVICES"). */
export function appliedChainKey(table: 'filter' | 'nat', chain: string): string {
  return `${table}/${chain}`;
}

export class AppliedChainMemo {
  private readonly entries = new Map<string, MemoEntry>();
  private epochValue = 0;

  /** Bumped by clear(); an update rendered in an earlier epoch cannot be committed. */
  get epoch(): number {
    return this.epochValue;
  }

  /** Number of chains remembered. */
  get size(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.valid) n++;
    return n;
  }

  /** The remembered rule bytes of a chain (a view, valid until the next commit), or undefined. */
  get(key: string): Buffer | undefined {
    const e = this.entries.get(key);
    return e === undefined || !e.valid ? undefined : e.buf.subarray(0, e.length);
  }

  /** Whether the kernel (as of the last committed restore) holds exactly `rules` in chain `key`. */
  matches(key: string, rules: LineBuffer): boolean {
    const e = this.entries.get(key);
    return e !== undefined && e.valid && rules.contentEquals(e.buf.subarray(0, e.length));
  }

  /**
   * Forgets every chain's content: until the next commit every top-level chain is written (and the
   * caller's next sync is full anyway). The Buffers stay allocated, for the full sync that follows
   * to refill in place.
   */
  clear(): void {
    for (const e of this.entries.values()) e.valid = false;
    this.epochValue++;
  }

  /**
   * Records what a successful restore wrote. Returns false (and changes nothing) when the memo was
   * cleared since the render, i.e. the kernel may no longer hold what was rendered. Throws when the
   * update's bytes were already reused by a later render, or it belongs to another memo.
   */
  commit(update: AppliedChainUpdate): boolean {
    if (update.memo !== this) throw new Error('AppliedChainUpdate committed to a different AppliedChainMemo than it was rendered with');
    if (update.epoch !== this.epochValue) return false;
    update.buffers.assertCurrent(update.generation);
    for (const [key, rules] of update.written) {
      let e = this.entries.get(key);
      // Unchanged content (every chain of a routine full sync): no copy at all.
      if (e !== undefined && e.valid && rules.contentEquals(e.buf.subarray(0, e.length))) continue;
      const length = rules.length;
      if (e === undefined) {
        e = { buf: Buffer.allocUnsafe(length), length: 0, valid: false };
        this.entries.set(key, e);
      } else if (length > e.buf.length || e.buf.length > 2 * length + 4096) {
        // Grow with headroom (services are added one at a time); shrink when mostly unused.
        e.buf = Buffer.allocUnsafe(length + (length >> 3));
      }
      rules.copyTo(e.buf, 0);
      e.length = length;
      e.valid = true;
    }
    return true;
  }
}

/**
 * The top-level chains a render wrote, to be committed to its memo after the restore succeeded.
 * Refers to the renderer's reusable memory: commit it before rendering again with the same cache.
 */
export class AppliedChainUpdate {
  /** @internal */
  constructor(
    readonly memo: AppliedChainMemo,
    readonly epoch: number,
    /** @internal */ readonly buffers: RenderBuffers,
    /** @internal */ readonly generation: number,
    /** @internal "table/chain" → the chain's rule lines as written. */ readonly written: ReadonlyArray<readonly [string, LineBuffer]>,
  ) {}

  /** Keys ("table/chain") of the top-level chains written in full by this render. */
  get chains(): string[] {
    return this.written.map(([key]) => key);
  }
}
