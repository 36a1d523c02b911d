import type { IPFamily, TextSink } from '@kube-proxy/core';

/**
 * The `# sync N LABEL TIME[ FAMILY]` line that opens every --dry-run block (core's SyncingProxier
 * writes it; the family is there only when the run is dual-stack).
 */
const HEADER = /^# sync \d+ \S+ \S+(?: (IPv4|IPv6))?$/;

/**
 * Splits --dry-run output into the rules of each family: the text of the last block of each, without
 * its header. A block without a family tag belongs to `families[0]` (a single-stack run).
 */
export function splitDryRunBlocks(text: string, families: readonly IPFamily[]): Map<IPFamily, string> {
  const out = new Map<IPFamily, string>();
  let family: IPFamily | undefined;
  let body: string[] = [];
  const flush = () => {
    if (family) out.set(family, body.join('\n'));
  };
  for (const line of text.split('\n')) {
    const m = HEADER.exec(line);
    if (!m) {
      body.push(line);
      continue;
    }
    flush();
    family = (m[1] as IPFamily | undefined) ?? families[0];
    body = [];
  }
  flush();
  return out;
}

/**
 * Keeps, beside the --dry-run sink, the last complete block of each family a running proxy wrote, so
 * /debug/trace can answer over the rules it printed. Blocks are written one at a time (core's
 * writeDryRunBlock), header first, so a header ends the previous block.
 */
export class DryRunRecorder {
  private readonly done = new Map<IPFamily, string>();
  private family: IPFamily | undefined;
  private pieces: string[] = [];

  constructor(private readonly families: readonly IPFamily[]) {}

  /** `inner`, recording what passes through it. */
  wrap(inner: TextSink): TextSink {
    return {
      write: (text) => {
        this.take(text);
        inner.write(text);
      },
      ...(inner.drained ? { drained: inner.drained.bind(inner) } : {}),
    };
  }

  /**
   * The rules of the last block written for `family`. The newest block is taken as it stands: it is
   * whole unless a slow stdout reader is still taking a large one (then it is the part written so far).
   */
  lastBlock(family: IPFamily): string | undefined {
    if (family === this.family && this.pieces.length > 0) return this.pieces.join('');
    return this.done.get(family);
  }

  private take(text: string): void {
    const nl = text.indexOf('\n');
    const first = nl < 0 ? text : text.slice(0, nl);
    const m = HEADER.exec(first);
    if (!m) {
      this.pieces.push(text);
      return;
    }
    if (this.family && this.pieces.length > 0) this.done.set(this.family, this.pieces.join(''));
    this.family = (m[1] as IPFamily | undefined) ?? this.families[0];
    this.pieces = nl < 0 ? [] : [text.slice(nl + 1)];
  }
}
