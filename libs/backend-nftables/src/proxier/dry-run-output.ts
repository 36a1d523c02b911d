import type { MemoryNftTable } from '../nft/memory-table.js';

/**
 * --dry-run: the table in upstream's nft.Dump() form, in pieces of ~256 kB (a 10k-service table
 * prints as ~30 MB), read while the engine writes them to stdout.
 */
export function* dryRunTableText(table: MemoryNftTable): Generator<string> {
  let piece = '';
  for (const line of table.dumpLines()) {
    piece += line + '\n';
    if (piece.length >= 256 * 1024) {
      yield piece;
      piece = '';
    }
  }
  yield piece === '' ? '\n' : piece;
}
