/**
 * iptables-nft-restore 1.8.x with --noflush spends its time, on a big payload, in its own chain
 * cache: for every command it inserts the chain and jump target it names into a sorted linked list
 * (nft-cache.c, cache_chain_list_insert), so a full sync costs rules × chains — a 10,000-service
 * payload did not finish in 15 minutes. The list is skipped once any command of the table names no
 * chain: then the tool fetches the table whole. `-S` (print the table's rules) is such a command and
 * changes nothing, so a full sync puts it first in each table block: 10k services load in 6–9 s,
 * into the same kernel state, still one atomic transaction per table
 * (tools/src/bench/nft-restore-shape.ts; measured on Debian 12's 1.8.9).
 * Partial syncs must not get it: fetching the whole table costs ~2 s at 10k, the list ~50 ms.
 */

/** The line put after each `*table` header line. */
export const NFT_CACHE_HINT_LINE = '-S\n';
const HINT = Buffer.from(NFT_CACHE_HINT_LINE, 'latin1');
const NEWLINE = 0x0a;
const STAR = 0x2a;

/**
 * The payload with NFT_CACHE_HINT_LINE after every table header (a line starting with `*`), as
 * chunks: the originals cut into views around the insertions, nothing copied. Chunk boundaries may
 * fall anywhere, even inside the header line.
 */
export function withNftCacheHint(chunks: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let atLineStart = true;
  /** Inside a header line, waiting for its newline. */
  let inHeader = false;
  for (const chunk of chunks) {
    let from = 0;
    let pos = 0;
    while (pos < chunk.length) {
      if (inHeader) {
        const nl = chunk.indexOf(NEWLINE, pos);
        if (nl < 0) break;
        out.push(chunk.subarray(from, nl + 1), HINT);
        from = pos = nl + 1;
        inHeader = false;
        atLineStart = true;
        continue;
      }
      if (atLineStart && chunk[pos] === STAR) {
        inHeader = true;
        continue;
      }
      // The next line start that begins a header: "\n*" inside this chunk, or a newline at its end.
      const next = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).indexOf('\n*', pos, 'latin1');
      if (next >= 0) {
        pos = next + 1;
        atLineStart = true;
        continue;
      }
      atLineStart = chunk[chunk.length - 1] === NEWLINE;
      pos = chunk.length;
    }
    if (from < chunk.length) out.push(chunk.subarray(from));
    if (chunk.length > 0 && !inHeader) atLineStart = chunk[chunk.length - 1] === NEWLINE;
  }
  return out;
}

/**
 * The payload line a line number of the hinted payload (withNftCacheHint's output) stands for, so
 * an iptables-restore error still blames the line the caller wrote; a hint line maps to its header.
 */
export function lineBeforeHint(hinted: readonly Uint8Array[], line: number): number {
  let lineNo = 1;
  let hintsBefore = 0;
  for (const chunk of hinted) {
    if (lineNo > line) break;
    if (chunk === HINT) {
      if (lineNo === line) return line - hintsBefore - 1;
      hintsBefore++;
      lineNo++;
      continue;
    }
    for (let at = chunk.indexOf(NEWLINE); at >= 0 && lineNo <= line; at = chunk.indexOf(NEWLINE, at + 1)) lineNo++;
  }
  return line - hintsBefore;
}
