import type { TextSink } from '@kube-proxy/core';
import { writeDryRunBlock } from '@kube-proxy/core';
import type { MemoryNftTable } from '../nft/memory-table.js';

/**
 * --dry-run: `header`, then the table in upstream's nft.Dump() form, in pieces of ~256 kB that wait
 * for stdout (a 10k-service table prints as ~30 MB; see writeDryRunBlock).
 */
export async function writeDryRunTable(sink: TextSink, header: string, table: MemoryNftTable): Promise<void> {
  await writeDryRunBlock(sink, (function* () {
    yield header;
    let piece = '';
    for (const line of table.dumpLines()) {
      piece += line + '\n';
      if (piece.length >= 256 * 1024) {
        yield piece;
        piece = '';
      }
    }
    yield piece === '' ? '\n' : piece;
  })());
}
