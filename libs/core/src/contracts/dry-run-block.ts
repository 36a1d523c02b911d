import type { TextSink } from './proxy-context.js';

/** Per sink, the end of the last block queued: blocks of different families never interleave. */
const tails = new WeakMap<TextSink, Promise<void>>();

/**
 * Writes one --dry-run block (a `# sync` header and its tables) to the sink, piece by piece, waiting
 * for the sink to drain between pieces so a big block is never queued whole. Blocks are written in
 * the order they were handed over, one at a time: the IPv4 and IPv6 proxiers sync concurrently and
 * each block must reach stdout in one piece. `pieces` is read lazily, while the block is written;
 * the caller keeps what it reads from unchanged until the returned promise resolves.
 */
export function writeDryRunBlock(sink: TextSink, pieces: Iterable<string>): Promise<void> {
  const previous = tails.get(sink) ?? Promise.resolve();
  const block = previous.then(async () => {
    for (const piece of pieces) {
      sink.write(piece);
      if (sink.drained) await sink.drained();
    }
  });
  tails.set(
    sink,
    block.catch(() => undefined),
  );
  return block;
}
