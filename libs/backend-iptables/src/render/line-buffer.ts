/**
 * Line buffers for building iptables-restore input (upstream's proxyutil.LineBuffer).
 *
 * A node with 10,000 services × 5 endpoints produces ~235,000 lines (~18 MB) per full sync, so
 * how lines are accumulated dominates the render's cost. Measured on the project's machines:
 * - an array of line strings joined at the end, or one growing string, spends most of its time in
 *   GC (every line survives until the join and gets promoted) and in page-faulting a fresh 18 MB
 *   result on every sync (~300 ms per render);
 * - building each line with one template literal and copying it straight into Buffer memory that
 *   is reused from sync to sync leaves only short-lived garbage and no fresh large allocations
 *   (~25 ms for the same text).
 * So LineBuffer keeps its text in a list of fixed-size Buffer chunks (no copying when it grows,
 * and only the pages actually written are ever touched) that are kept across reset()s: keep the
 * buffers (see RenderBuffers) from sync to sync rather than re-creating them.
 *
 * Text is written as latin1 (one byte per UTF-16 code unit). Everything kube-proxy writes is
 * ASCII: chain names, IPs, numbers, and Kubernetes object/port names, which the API server
 * validates as DNS labels / IANA service names. A name that is not (fed in bypassing validation)
 * would be dangerous here: latin1 keeps only the low byte, so U+010A becomes 0x0A, a newline. The
 * renderer therefore writes names only through core's commentText (always ASCII) and checks the
 * finished bytes (assertRestorePayload against RenderBuffers.lines).
 */
export interface LineSink {
  /** Appends one line (without the trailing newline). */
  write(line: string): void;
  /** Number of lines written since the last reset (upstream's Lines()). */
  readonly lines: number;
}

/**
 * Buffer's native latin1 writer (present on Buffer.prototype since early Node versions, though not
 * in the typings): called directly it skips Buffer#write's argument normalisation, which is ~a
 * third of the cost of writing a line. Falls back to write(s, offset, 'latin1') if it ever goes.
 */
interface Latin1Buffer extends Buffer {
  latin1Write(s: string, offset: number): number;
}
const HAS_LATIN1_WRITE = typeof (Buffer.prototype as Partial<Latin1Buffer>).latin1Write === 'function';

const DEFAULT_CHUNK = 1 << 20;

export class LineBuffer implements LineSink {
  /** Filled chunks and how many bytes of each are used, plus the current chunk. */
  private readonly full: Buffer[] = [];
  private readonly fullLengths: number[] = [];
  /** Chunks released by reset(), reused before allocating. */
  private readonly spare: Buffer[] = [];
  private cur: Buffer;
  private off = 0;
  private fullBytes = 0;
  private count = 0;

  constructor(private readonly chunkBytes = DEFAULT_CHUNK) {
    this.cur = Buffer.allocUnsafe(chunkBytes);
  }

  write(line: string): void {
    if (this.off + line.length + 1 > this.cur.length) this.nextChunk(line.length + 1);
    this.off += HAS_LATIN1_WRITE ? (this.cur as Latin1Buffer).latin1Write(line, this.off) : this.cur.write(line, this.off, 'latin1');
    this.cur[this.off++] = 10;
    this.count++;
  }

  /** Writes `args` joined by single spaces (upstream's Write(args...)); for cold paths only. */
  writeArgs(...args: ReadonlyArray<string | readonly string[]>): void {
    const flat: string[] = [];
    for (const a of args) {
      if (typeof a === 'string') flat.push(a);
      else flat.push(...a);
    }
    this.write(flat.join(' '));
  }

  get lines(): number {
    return this.count;
  }

  /** Bytes written. */
  get length(): number {
    return this.fullBytes + this.off;
  }

  /** Bytes of chunk memory this buffer holds (content, current chunk and spares). */
  get capacity(): number {
    let n = this.cur.length;
    for (const c of this.full) n += c.length;
    for (const c of this.spare) n += c.length;
    return n;
  }

  /** Forgets the content but keeps the memory for the next sync. */
  reset(): void {
    for (const c of this.full) this.spare.push(c);
    this.full.length = 0;
    this.fullLengths.length = 0;
    this.fullBytes = 0;
    this.off = 0;
    this.count = 0;
  }

  /**
   * Forgets the content and gives back every chunk but the current one: a full sync at 10,000
   * services fills ~18 MB of chunks, which reset() would keep for a full sync that comes at most
   * once per hour, while the partial syncs in between need a fraction of one chunk.
   */
  release(): void {
    this.reset();
    this.spare.length = 0;
  }

  /** The content as chunk views, in order (valid until the next write or reset). */
  chunks(): Buffer[] {
    const out: Buffer[] = [];
    for (let i = 0; i < this.full.length; i++) out.push(this.full[i].subarray(0, this.fullLengths[i]));
    if (this.off > 0) out.push(this.cur.subarray(0, this.off));
    return out;
  }

  /** The buffer's text: every line terminated by "\n" ("" when empty). */
  toString(): string {
    let s = '';
    for (const c of this.chunks()) s += c.toString('latin1');
    return s;
  }

  /** The bytes written, contiguous (copies when there is more than one chunk). */
  bytes(): Buffer {
    const chunks = this.chunks();
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.length);
  }

  /**
   * Appends another buffer's lines (bytes and count), one source chunk at a time so that no line
   * is split across chunks here either.
   */
  writeFrom(src: LineBuffer): void {
    const chunks = src.chunks();
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i];
      if (this.off + c.length > this.cur.length) this.nextChunk(c.length);
      this.off += c.copy(this.cur, this.off);
    }
    this.count += src.count;
  }

  /** Whether the content is exactly `bytes` (chunk-wise compare, no copy). */
  contentEquals(bytes: Buffer): boolean {
    if (bytes.length !== this.length) return false;
    let o = 0;
    for (let i = 0; i < this.full.length; i++) {
      const n = this.fullLengths[i];
      if (this.full[i].compare(bytes, o, o + n, 0, n) !== 0) return false;
      o += n;
    }
    return this.cur.compare(bytes, o, o + this.off, 0, this.off) === 0;
  }

  /** Copies the content into `target` at `offset`; returns the offset after it. */
  copyTo(target: Buffer, offset: number): number {
    for (let i = 0; i < this.full.length; i++) offset += this.full[i].copy(target, offset, 0, this.fullLengths[i]);
    return offset + this.cur.copy(target, offset, 0, this.off);
  }

  private nextChunk(needed: number): void {
    if (this.off > 0) {
      this.full.push(this.cur);
      this.fullLengths.push(this.off);
      this.fullBytes += this.off;
    } else {
      this.spare.push(this.cur);
    }
    let next: Buffer | undefined;
    for (let i = this.spare.length - 1; i >= 0; i--) {
      if (this.spare[i].length >= needed) {
        next = this.spare[i];
        this.spare.splice(i, 1);
        break;
      }
    }
    this.cur = next ?? Buffer.allocUnsafe(Math.max(this.chunkBytes, needed));
    this.off = 0;
  }
}

/**
 * Writes every line to two sinks: on a full sync with an AppliedChainMemo, a top-level chain's
 * rules go both into the (upstream-ordered, interleaved) payload and into that chain's own buffer,
 * from which the memo learns what the kernel will hold.
 */
export class TeeSink implements LineSink {
  constructor(
    private readonly first: LineSink,
    private readonly second: LineSink,
  ) {}

  write(line: string): void {
    this.first.write(line);
    this.second.write(line);
  }

  /** Lines written through this tee (as the second sink counts them). */
  get lines(): number {
    return this.second.lines;
  }
}

/**
 * Counts writes and throws the data away (upstream's discardLineBuffer): used for the chains of
 * services a partial sync does not rewrite, so that rule-count metrics still come out right.
 */
export class DiscardLineBuffer implements LineSink {
  private count = 0;

  write(_line: string): void {
    this.count++;
  }

  /** Counts `n` lines without being given them (the renderer skips formatting them). */
  skip(n: number): void {
    this.count += n;
  }

  get lines(): number {
    return this.count;
  }

  reset(): void {
    this.count = 0;
  }
}

const FILTER_HEADER = Buffer.from('*filter\n', 'latin1');
const NAT_HEADER = Buffer.from('COMMIT\n*nat\n', 'latin1');
const TRAILER = Buffer.from('COMMIT\n', 'latin1');

/**
 * The renderer's reusable output memory: the sections of the payload. One per proxier (it lives in
 * the ChainNameCache the proxier keeps), reused every sync.
 *
 * natTopChains / natTopRules hold the top-level nat chains a partial sync with an
 * AppliedChainMemo found changed; they are written ahead of the per-service sections (empty
 * otherwise: a full sync interleaves top-level rules with the others, as upstream).
 */
export class RenderBuffers {
  readonly filterChains = new LineBuffer(1 << 12);
  readonly filterRules = new LineBuffer(1 << 16);
  readonly natTopChains = new LineBuffer(1 << 10);
  readonly natTopRules = new LineBuffer(1 << 16);
  readonly natChains = new LineBuffer(DEFAULT_CHUNK);
  readonly natRules = new LineBuffer(DEFAULT_CHUNK);
  /** The rules of each top-level chain ("table/chain"), kept only when rendering with a memo. */
  private readonly perChain = new Map<string, LineBuffer>();
  private out: Buffer | undefined;
  private gen = 0;

  /** Incremented by every reset(): results of earlier renders are stale from then on. */
  get generation(): number {
    return this.gen;
  }

  /** Throws if a render result of generation `gen` is read after the buffers were reused. */
  assertCurrent(gen: number): void {
    if (gen !== this.gen) {
      throw new Error(
        'renderRuleset result read after a later renderRuleset call reused its buffers: read payload/payloadBytes/payloadChunks before rendering again',
      );
    }
  }

  reset(): void {
    this.gen++;
    this.filterChains.reset();
    this.filterRules.reset();
    this.natTopChains.reset();
    this.natTopRules.reset();
    this.natChains.reset();
    this.natRules.reset();
    for (const b of this.perChain.values()) b.reset();
  }

  /**
   * After a sync's restore (and its memo commit): drops the content, the chunks beyond one per
   * section and the assembled copy, so the memory of a full sync is not held until the next one.
   * Render results of earlier generations cannot be read afterwards (as after reset()).
   */
  release(): void {
    this.reset();
    this.filterChains.release();
    this.filterRules.release();
    this.natTopChains.release();
    this.natTopRules.release();
    this.natChains.release();
    this.natRules.release();
    for (const b of this.perChain.values()) b.release();
    this.out = undefined;
  }

  /**
   * The reusable buffer for one top-level chain's rules (`key` = "table/chain"). Created on first
   * use, so renders without a memo never pay for them; there are at most ten (KUBE_CHAINS).
   */
  chainBuffer(key: string): LineBuffer {
    let b = this.perChain.get(key);
    if (b === undefined) {
      b = new LineBuffer(1 << 16);
      this.perChain.set(key, b);
    }
    return b;
  }

  /**
   * Lines the payload holds as written: the four header/trailer lines (`*filter`, `COMMIT`,
   * `*nat`, `COMMIT`) plus every line written to the sections. renderRuleset checks the payload's
   * bytes against it, so a line that carried a line break of its own is caught.
   */
  get lines(): number {
    return (
      4 +
      this.filterChains.lines +
      this.filterRules.lines +
      this.natTopChains.lines +
      this.natChains.lines +
      this.natTopRules.lines +
      this.natRules.lines
    );
  }

  /** Total payload size in bytes. */
  get length(): number {
    return (
      FILTER_HEADER.length +
      this.filterChains.length +
      this.filterRules.length +
      NAT_HEADER.length +
      this.natTopChains.length +
      this.natChains.length +
      this.natTopRules.length +
      this.natRules.length +
      TRAILER.length
    );
  }

  /**
   * The payload as an ordered list of buffers ("*filter\n", filter chains, filter rules,
   * "COMMIT\n*nat\n", nat chains, nat rules, "COMMIT\n"; the nat top-level sections come first
   * within theirs): write them in order, no copying.
   */
  chunks(): Buffer[] {
    return [
      FILTER_HEADER,
      ...this.filterChains.chunks(),
      ...this.filterRules.chunks(),
      NAT_HEADER,
      ...this.natTopChains.chunks(),
      ...this.natChains.chunks(),
      ...this.natTopRules.chunks(),
      ...this.natRules.chunks(),
      TRAILER,
    ];
  }

  /** The payload in one contiguous buffer (reused memory); returns a view of it. */
  assemble(): Buffer {
    const total = this.length;
    if (this.out === undefined || total > this.out.length) {
      this.out = Buffer.allocUnsafe(Math.max(total, (this.out?.length ?? 0) * 2));
    }
    const out = this.out;
    let off = FILTER_HEADER.copy(out, 0);
    off = this.filterChains.copyTo(out, off);
    off = this.filterRules.copyTo(out, off);
    off += NAT_HEADER.copy(out, off);
    off = this.natTopChains.copyTo(out, off);
    off = this.natChains.copyTo(out, off);
    off = this.natTopRules.copyTo(out, off);
    off = this.natRules.copyTo(out, off);
    off += TRAILER.copy(out, off);
    return out.subarray(0, off);
  }
}
