import { lineBeforeHint, withNftCacheHint } from './nft-restore-cache-hint.js';

const PAYLOAD = '*filter\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m comment --comment "a *b" -j ACCEPT\nCOMMIT\n*nat\n:KUBE-SVC-X - [0:0]\n-A KUBE-SVC-X -j KUBE-SEP-Y\nCOMMIT\n';
const EXPECTED = '*filter\n-S\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m comment --comment "a *b" -j ACCEPT\nCOMMIT\n*nat\n-S\n:KUBE-SVC-X - [0:0]\n-A KUBE-SVC-X -j KUBE-SEP-Y\nCOMMIT\n';

function split(text: string, size: number): Uint8Array[] {
  const bytes = Buffer.from(text, 'latin1');
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return chunks;
}

const joined = (chunks: readonly Uint8Array[]) => Buffer.concat(chunks).toString('latin1');

describe('withNftCacheHint', () => {
  it('puts -S after each table header, wherever the chunks split the text', () => {
    for (let size = 1; size <= PAYLOAD.length; size++) expect(joined(withNftCacheHint(split(PAYLOAD, size)))).toBe(EXPECTED);
  });

  it('leaves a * inside a line alone, and a payload without tables unchanged', () => {
    const text = '-A X -m comment --comment "*nat" -j Y\n# *filter\n';
    expect(joined(withNftCacheHint(split(text, 3)))).toBe(text);
  });

  it('cuts the original chunks into views instead of copying them', () => {
    const chunks = [Buffer.from('*nat\n:A - [0:0]\n'), Buffer.from('COMMIT\n')];
    const out = withNftCacheHint(chunks);
    expect(out[0]!.buffer).toBe(chunks[0]!.buffer);
    expect(out[out.length - 1]).toEqual(chunks[1]);
  });

  it('handles empty chunks and a header split right before its newline', () => {
    const chunks = [Buffer.from(''), Buffer.from('*fil'), Buffer.from('ter'), Buffer.from('\nCOMMIT\n'), Buffer.from('')];
    expect(joined(withNftCacheHint(chunks))).toBe('*filter\n-S\nCOMMIT\n');
  });

  it('maps a line of the hinted payload back to the line the caller wrote', () => {
    const original = PAYLOAD.split('\n');
    for (const size of [1, 5, PAYLOAD.length]) {
      const hinted = withNftCacheHint(split(PAYLOAD, size));
      const lines = joined(hinted).split('\n');
      lines.forEach((text, i) => {
        const back = lineBeforeHint(hinted, i + 1);
        if (text === '-S') expect(original[back - 1]!.startsWith('*')).toBe(true);
        else expect(original[back - 1]).toBe(text);
      });
    }
  });
});
